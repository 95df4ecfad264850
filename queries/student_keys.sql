-- student_keys: every key of the person $user_id (LiteLLM's key list and the requests
-- stored), so that all their keys count in their view
SELECT api_key_hash FROM keys_in_scope WHERE user_id = $user_id
UNION
SELECT DISTINCT r.api_key_hash::VARCHAR FROM in_scope_sums r WHERE r.user_id::VARCHAR = $user_id
ORDER BY api_key_hash
