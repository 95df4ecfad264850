"""Named points where a test can kill or pause a run, to prove crash safety.

Set ETL_FAILPOINT=<point>[#<hit>]=kill|sleep:<seconds>, for example
`day-merged#2=kill` (SIGKILL on the second day file written). Unset, it costs one
dictionary lookup per call.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

POINTS = ("chunk-staged", "day-merged", "rollup-written", "snapshots-written", "state-written")
_hits: Counter[str] = Counter()


def failpoint(point: str) -> None:
    spec = os.environ.get("ETL_FAILPOINT")
    if not spec:
        return
    where, _, action = spec.partition("=")
    name, _, nth = where.partition("#")
    if name != point:
        return
    _hits[point] += 1
    if _hits[point] != int(nth or 1):
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action.startswith("sleep:"):
        time.sleep(float(action.removeprefix("sleep:")))
