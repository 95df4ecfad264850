-- key_lookup: the key whose sha256 is $key_hash (sign-in), if LiteLLM knows it; when the
-- store has no key list at all (an older LiteLLM), the requests made with it stand in
SELECT api_key_hash, user_id, key_alias, blocked, expires, 'keys' AS source
FROM keys_in_scope
WHERE api_key_hash = $key_hash
UNION ALL
SELECT DISTINCT r.api_key_hash::VARCHAR, r.user_id::VARCHAR, r.key_alias::VARCHAR, false, NULL::TIMESTAMPTZ,
    'requests'
FROM in_scope_sums r
WHERE r.api_key_hash::VARCHAR = $key_hash AND NOT EXISTS (SELECT 1 FROM keys_in_scope)
