-- client_first_use: when each person first used each client, over everything this session
-- may see (not only the range: the lab's adoption of a tool since it came), with their
-- requests through it. The $top_names clients by people who used them (shown_name); the
-- others left out (a person's first use of them is not shown).
WITH measures AS (
    SELECT r.client AS name, metric.active_users(r) AS measure FROM in_scope_sums r GROUP BY r.client
),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, NULL) WHERE kept)
SELECT
    shown_name(r.client::VARCHAR) AS client,
    r."user",
    min(r.first_start) AS first_used,
    metric.requests(r) AS requests
FROM in_scope_sums r
JOIN kept k ON k.name IS NOT DISTINCT FROM r.client
GROUP BY r.client, r."user"
ORDER BY first_used, client, r."user"
