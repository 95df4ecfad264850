-- user_client_matrix: which people use which clients, and what it costs (one row per user
-- and client used). The $grid_names users by spend, then tokens, and the highlighted user
-- ($highlight); the $grid_names clients by requests; by name (shown_name). The others in
-- a row or column of their own, user or client NULL, users_folded or clients_folded of
-- them (setup/views.sql, kept_names)
WITH user_measures AS (
    SELECT r."user" AS name, [metric.spend_usd(r), metric.total_tokens(r)] AS measure
    FROM scoped_sums r
    GROUP BY r."user"
),
client_measures AS (
    SELECT r.client AS name, metric.requests(r) AS measure FROM scoped_sums r GROUP BY r.client
),
kept_users AS (SELECT * FROM kept_names(user_measures, $grid_names, $highlight::VARCHAR, NULL)),
kept_clients AS (SELECT * FROM kept_names(client_measures, $grid_names, NULL, NULL))
SELECT
    shown_name(r.kept_user::VARCHAR) AS "user",
    shown_name(r.kept_client::VARCHAR) AS client,
    CASE WHEN NOT r.user_kept THEN (SELECT count(*) FROM kept_users WHERE NOT kept) END AS users_folded,
    CASE WHEN NOT r.client_kept THEN (SELECT count(*) FROM kept_clients WHERE NOT kept) END AS clients_folded,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd
FROM (
    SELECT
        s.*,
        u.kept AS user_kept,
        c.kept AS client_kept,
        CASE WHEN u.kept THEN s."user" END AS kept_user,
        CASE WHEN c.kept THEN s.client END AS kept_client
    FROM scoped_sums s
    JOIN kept_users u ON u.name IS NOT DISTINCT FROM s."user"
    JOIN kept_clients c ON c.name IS NOT DISTINCT FROM s.client
) r
GROUP BY r.user_kept, r.kept_user, r.client_kept, r.kept_client
ORDER BY users_folded NULLS FIRST, "user", requests DESC, client
