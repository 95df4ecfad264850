"""The Arrow column operations the transform is written in: empty text as NULL, masks
and their counts, tag lists (a tag present, nulls dropped, the longest User-Agent tag),
and a Python function applied once per distinct value (the client and node rules)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from etl.transform_rules import USER_AGENT_TAG, Rules


def _nonempty(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """LiteLLM writes "" for many missing values: make them NULL."""
    return pc.if_else(pc.equal(arr, ""), pa.scalar(None, arr.type), arr)


def _any(*masks: pa.Array | pa.ChunkedArray) -> pa.Array:
    out = pc.fill_null(masks[0], False)
    for m in masks[1:]:
        out = pc.or_(out, pc.fill_null(m, False))
    return out


def _count(mask: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.sum(pc.cast(mask, pa.int64())).as_py() or 0)


def _flat(tags: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, pa.Array]:
    tags = tags.combine_chunks() if isinstance(tags, pa.ChunkedArray) else tags
    return pc.list_flatten(tags), pc.list_parent_indices(tags)


def _has_tag(tags: pa.ChunkedArray | pa.Array, wanted: Iterable[str]) -> pa.Array:
    n = len(tags)
    wanted = sorted(wanted)
    if not wanted or n == 0:
        return pa.array([False] * n, pa.bool_())
    flat, parents = _flat(tags)
    hits = pc.unique(parents.filter(pc.fill_null(pc.is_in(flat, pa.array(wanted)), False)))
    return pc.is_in(pa.array(range(n), pa.int64()), pc.cast(hits, pa.int64()))


def _drop_null_elements(tags: pa.ChunkedArray | pa.Array) -> pa.Array:
    tags = tags.combine_chunks() if isinstance(tags, pa.ChunkedArray) else tags
    flat = pc.list_flatten(tags)
    if flat.null_count == 0:
        return tags
    rows = tags.to_pylist()
    return pa.array([[t for t in r if t is not None] for r in rows], pa.list_(pa.string()))


def _longest_user_agent_tag(tags: pa.Array) -> pa.Array:
    """The longest "User-Agent: ..." tag without its prefix: LiteLLM adds the product
    ("User-Agent: claude-cli") and the full string ("User-Agent: claude-cli/2.0.14 (...)")."""
    flat, parents = _flat(tags)
    is_ua = pc.fill_null(pc.starts_with(flat, USER_AGENT_TAG), False)
    values = pc.utf8_slice_codeunits(flat.filter(is_ua), len(USER_AGENT_TAG))
    found = pa.table(
        {
            "owner": pc.cast(parents.filter(is_ua), pa.int64()),
            "value": values,
            "length": pc.utf8_length(values),
        }
    ).sort_by([("owner", "ascending"), ("length", "descending")])
    # sorted by owner, longest first: keep the first row of each owner
    first = pc.fill_null(pc.not_equal(pc.pairwise_diff(found["owner"].combine_chunks()), 0), True)
    best = found.filter(first)
    at = pc.index_in(pa.array(range(len(tags)), pa.int64()), value_set=best["owner"].combine_chunks())
    return _nonempty(pc.take(best["value"].combine_chunks(), at))


def _map_unique(arr: pa.Array | pa.ChunkedArray, fn: Callable[[str | None], str]) -> pa.Array:
    """`fn` over each distinct value once: user agents and api_bases repeat a lot."""
    uniques = pc.unique(arr)
    mapped = pa.array([fn(v) for v in uniques.to_pylist()], pa.string())
    return pc.take(mapped, pc.index_in(arr, value_set=uniques, skip_nulls=False))


_ABSENT = "\x01"


def _node_column(api_base: pa.Array, model_id: pa.Array, rules: Rules) -> pa.Array:
    key = pc.binary_join_element_wise(
        pc.fill_null(api_base, _ABSENT), pc.fill_null(model_id, _ABSENT), "\x00"
    )

    def node(k: str | None) -> str:
        base, _, mid = (k or "").partition("\x00")
        return rules.node_for(None if base == _ABSENT else base, None if mid == _ABSENT else mid)

    return _map_unique(key, node)
