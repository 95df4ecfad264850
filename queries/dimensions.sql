-- dimensions: the values each filterable dimension takes in what this session may see,
-- busiest first (the filters' choices): the $filter_names busiest of each, by name
-- (setup/views.sql shown_name)
SELECT dimension, shown_name(value) AS value, requests
FROM (
    SELECT
        dimension,
        value,
        sum(n)::BIGINT AS requests,
        row_number() OVER (PARTITION BY dimension ORDER BY sum(n) DESC, value) AS place
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
)
WHERE place <= $filter_names
ORDER BY dimension, requests DESC, value
