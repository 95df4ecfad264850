"""Whose a request is, as every page names it: one identity per person, key or end user,
and never two sources under one name.

The store's `user` column is the first of user_id, key alias, end_user and `key:<hash
prefix>` (docs/store.md). User ids and key aliases are set by the lab's administrators;
`end_user` is the OpenAI `user` field that any key holder sets to anything, so a request
labelled with a classmate's id must not be counted, filtered or highlighted as theirs.
The reader therefore marks every identity that came from `end_user` (in SQL, on rollup
rows and single requests alike, from the columns both carry: stored files keep their
meaning and need no rewrite).
"""

from __future__ import annotations

from typing import Final

END_USER: Final = "end user: "  # what an identity taken from `end_user` starts with

# The `user` column as the pages use it: `usr` unless it came from end_user. A row whose
# key has an owner or an alias got its user from those; one without either got it from
# end_user, unless it is the key's own label (or `unknown`, for a row without a key).
SQL_MACRO: Final = f"""
CREATE MACRO user_identity(user_id, key_alias, usr, api_key_hash) AS
    CASE
        WHEN user_id IS NOT NULL OR key_alias IS NOT NULL THEN usr
        WHEN usr = 'key:' || left(api_key_hash, 8) THEN usr
        WHEN usr = 'unknown' AND coalesce(api_key_hash, '') = '' THEN usr
        ELSE '{END_USER}' || usr
    END
"""


def is_end_user(identity: str) -> bool:
    return identity.startswith(END_USER)
