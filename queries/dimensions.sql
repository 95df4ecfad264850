-- dimensions: every value each filterable dimension takes in what this session may see,
-- busiest first (the filters' choices)
SELECT dimension, value, count(*) AS requests
FROM (
    SELECT 'user' AS dimension, "user"::VARCHAR AS value FROM in_scope
    UNION ALL
    SELECT 'model', model_group::VARCHAR FROM in_scope
    UNION ALL
    SELECT 'node', node::VARCHAR FROM in_scope
    UNION ALL
    SELECT 'client', client::VARCHAR FROM in_scope
)
WHERE value IS NOT NULL
GROUP BY dimension, value
ORDER BY dimension, requests DESC, value
