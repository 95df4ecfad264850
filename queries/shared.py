"""A cache shared by every session of the process: least recently used out first, and a
value being computed is awaited, not computed again (a class opening the dashboard at
once asks for the same result fifty times in the same second)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


class Shared(Generic[T]):
    """`share(value)` is what each caller gets (a copy, or the value itself when nobody
    changes it); `size(value)` counts against `max_size`."""

    def __init__(
        self,
        *,
        max_entries: int,
        max_size: int | None = None,
        size: Callable[[T], int] = lambda _: 1,
        share: Callable[[T], T] = lambda value: value,
    ) -> None:
        self.max_entries, self.max_size = max_entries, max_size
        self._size, self._share = size, share
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self._pending: dict[Hashable, Future[T]] = {}
        self._total = 0
        self.hits = self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                self.hits += 1
                return self._share(self._done[key][0])
            pending = self._pending.get(key)
            if pending is not None:
                self.hits += 1  # shared all the same: computed once, for both
            else:
                self.misses += 1
                mine: Future[T] = Future()
                self._pending[key] = mine
        if pending is not None:
            return self._share(pending.result())
        try:
            value = compute()
        except BaseException as exc:
            mine.set_exception(exc)
            with self._lock:
                del self._pending[key]
            raise
        mine.set_result(value)
        size = self._size(value)  # outside the lock: every session's lookups wait on it
        with self._lock:
            del self._pending[key]
            self._keep(key, value, size)
        return self._share(value)

    def __len__(self) -> int:
        return len(self._done)

    def _keep(self, key: Hashable, value: T, size: int) -> None:
        if self.max_size is not None and size > self.max_size // 4:
            return  # one huge value would push out everything else
        self._done[key] = (value, size)
        self._total += size
        limit = self.max_size if self.max_size is not None else float("inf")
        while len(self._done) > self.max_entries or self._total > limit:
            _, (_, dropped) = self._done.popitem(last=False)
            self._total -= dropped
