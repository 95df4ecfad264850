-- dimensions: every value each filterable dimension takes in what this session may see,
-- busiest first (the filters' choices)
SELECT dimension, value, sum(n)::BIGINT AS requests
FROM (
    SELECT 'user' AS dimension, "user"::VARCHAR AS value, n FROM in_scope_sums
    UNION ALL
    SELECT 'model', model_group::VARCHAR, n FROM in_scope_sums
    UNION ALL
    SELECT 'node', node::VARCHAR, n FROM in_scope_sums
    UNION ALL
    SELECT 'client', client::VARCHAR, n FROM in_scope_sums
)
WHERE value IS NOT NULL
GROUP BY dimension, value
ORDER BY dimension, requests DESC, value
