-- The views every query reads. The runner sets, on each query's own cursor, the session
-- variable `filters` (a struct, see queries/filters.py) and the day files of its window
-- (queries/window.py), so the filters are applied in SQL, always. Queries read these
-- views, never the tables or the files underneath (a test checks): a student's scope
-- (`only_keys`) is applied here, once.
--
-- Two kinds of rows: single requests (`requests`, from the window's day files) and sums
-- (`scoped_sums`, `in_scope_sums`: each day's rollup rows, with single requests for the
-- days the window covers only in part). Both carry the PARTS of contract/measures.py, so
-- every measure but the percentiles reads either.

-- Names as pages show them, whatever LiteLLM was sent (issue 27: a user agent or model of
-- a megabyte, 100,000 distinct ones). shown_name: a name of more than 200 characters cut
-- to 200, '…', and the first 32 hex digits of its SHA-256, so that two long names with the
-- same beginning stay two names; the store keeps the whole name.
CREATE MACRO shown_name(name) AS
    CASE WHEN length(name) > 200 THEN left(name, 200) || '…' || left(sha256(name), 32) ELSE name END;
-- name_in(names, name): `name` is one of `names`, whole or as shown_name shows it (a filter
-- or highlight picked from the page holds the shown name; strlen, bytes, is the cheap test:
-- a name of at most 200 bytes is shown whole)
CREATE MACRO name_in(names, name) AS
    list_contains(names, name) OR (strlen(name) > 200 AND list_contains(names, shown_name(name)));

CREATE MACRO key_in_scope(api_key_hash) AS
    getvariable('filters').only_keys::VARCHAR[] IS NULL
    OR list_contains(getvariable('filters').only_keys::VARCHAR[], api_key_hash::VARCHAR);

CREATE MACRO row_selected(usr, model_group, node, client, status) AS
    (getvariable('filters').users::VARCHAR[] IS NULL
     OR name_in(getvariable('filters').users::VARCHAR[], usr::VARCHAR))
    AND (getvariable('filters').models::VARCHAR[] IS NULL
         OR name_in(getvariable('filters').models::VARCHAR[], model_group::VARCHAR))
    AND (getvariable('filters').nodes::VARCHAR[] IS NULL
         OR name_in(getvariable('filters').nodes::VARCHAR[], node::VARCHAR))
    AND (getvariable('filters').clients::VARCHAR[] IS NULL
         OR name_in(getvariable('filters').clients::VARCHAR[], client::VARCHAR))
    AND (getvariable('filters').statuses::VARCHAR[] IS NULL
         OR list_contains(getvariable('filters').statuses::VARCHAR[], status::VARCHAR));

CREATE MACRO in_range(t) AS
    t >= getvariable('filters').range_start::TIMESTAMPTZ AND t < getvariable('filters').range_end::TIMESTAMPTZ;

-- in_scope: the window's requests this session may see at all (all of them, or a student's own)
CREATE VIEW in_scope AS
SELECT * FROM requests f WHERE key_in_scope(f.api_key_hash);

-- selected: those of them in the filters' dimensions (any time)
CREATE VIEW selected AS
SELECT * FROM in_scope f WHERE row_selected(f."user", f.model_group, f.node, f.client, f.status);

-- scoped: the selected requests that started in the filters' time range
CREATE VIEW scoped AS
SELECT * FROM selected f WHERE in_range(f.start_time);

-- overlapping: the selected requests running at any moment of the range, also those that
-- started before it or end after it (what was in flight, for concurrency)
CREATE VIEW overlapping AS
SELECT *
FROM selected f
WHERE f.start_time < getvariable('filters').range_end::TIMESTAMPTZ
  AND f.end_time > getvariable('filters').range_start::TIMESTAMPTZ;

-- in_scope_sums: every day's rollup rows this session may see (all time; no other filter)
CREATE VIEW in_scope_sums AS
SELECT * REPLACE (user_identity(r.user_id, r.key_alias, r."user", r.api_key_hash) AS "user")
FROM rollup_rows r WHERE key_in_scope(r.api_key_hash);

-- scoped_sums: what `scoped` holds, as sums: the rollup rows of the days the range covers
-- whole, and the single requests of the days it covers in part. Same filters, same totals.
CREATE VIEW scoped_sums AS
SELECT * EXCLUDE (date)
FROM (  -- the rollups of the days the range covers whole, no others
    SELECT * REPLACE (user_identity(w.user_id, w.key_alias, w."user", w.api_key_hash) AS "user")
    FROM window_rollups w
) r
WHERE key_in_scope(r.api_key_hash)
  AND row_selected(r."user", r.model_group, r.node, r.client, r.status)
UNION ALL BY NAME
SELECT *
FROM edge_requests f
WHERE key_in_scope(f.api_key_hash)
  AND row_selected(f."user", f.model_group, f.node, f.client, f.status)
  AND in_range(f.first_start);

-- scoped_series: the range by local date (in the series' zone), status and latency, as
-- sums: the series of the days the range covers whole, and the single requests of the
-- days it covers in part (their exact duration as their latency). Only where the plan
-- allows it: the series hold no person, key, model, node or client.
CREATE VIEW scoped_series AS
SELECT local_date, status, hist_value(latency_bin) AS latency, * EXCLUDE (date, local_date, status, latency_bin)
FROM window_series r
WHERE getvariable('plan').series
  AND row_selected(NULL, NULL, NULL, NULL, r.status)
UNION ALL BY NAME
SELECT * EXCLUDE (start_time)
FROM edge_series f
WHERE getvariable('plan').series
  AND row_selected(NULL, NULL, NULL, NULL, f.status)
  AND in_range(f.start_time);

-- scoped_latency: what latency percentiles are computed from: the latency of every
-- request of the range and how many had it; from the series where the plan allows it
-- (each bin's value, within 1 %, see contract/measures.py), else each request's own.
CREATE VIEW scoped_latency AS
SELECT local_date, latency, n FROM scoped_series
UNION ALL
SELECT (f.start_time AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE, f.duration_ms::DOUBLE, 1
FROM scoped f
WHERE NOT getvariable('plan').series;

-- latency_quantile(q, by_day): the q-quantile of scoped_latency, interpolated between
-- the two values around its position as quantile_cont does, for the whole range (one
-- row, local_date NULL) or per local date
CREATE MACRO latency_quantile(q, by_day) AS TABLE
WITH counted AS (
    SELECT CASE WHEN by_day THEN local_date END AS local_date, latency, sum(n) AS n
    FROM scoped_latency
    GROUP BY ALL
),
ranked AS (
    SELECT
        local_date,
        latency,
        sum(n) OVER (PARTITION BY local_date ORDER BY latency ROWS UNBOUNDED PRECEDING) AS upto,
        sum(n) OVER (PARTITION BY local_date) AS total
    FROM counted
),
placed AS (
    SELECT
        local_date,
        (any_value(total) - 1) * q AS position,
        min(latency) FILTER (WHERE upto > floor((total - 1) * q)) AS below,
        min(latency) FILTER (WHERE upto > ceil((total - 1) * q)) AS above
    FROM ranked
    GROUP BY local_date
)
SELECT local_date, below + (position - floor(position)) * (above - below) AS value
FROM placed;

-- buckets: every 15-minute slot of the range with the display bucket (the hour or day in
-- the display time zone) it belongs to. Every UTC offset in use is a multiple of 15
-- minutes, so a slot never straddles two buckets, and converting a few thousand slots to
-- local time costs far less than converting every request. `bucket` is the local label;
-- `bucket_start` (the bucket's first instant) tells apart the two hours that share a
-- label when clocks go back. Queries LEFT JOIN requests to it on q15, which also gives
-- empty buckets their row.
CREATE VIEW buckets AS
WITH slots AS (
    SELECT
        q15,
        make_timestamptz(q15 * 900000000) AS slot_start,
        make_timestamptz(q15 * 900000000) AT TIME ZONE getvariable('filters').tz::VARCHAR AS local_time
    FROM range(
        epoch_us(getvariable('filters').range_start::TIMESTAMPTZ) // 900000000,
        (epoch_us(getvariable('filters').range_end::TIMESTAMPTZ) + 899999999) // 900000000
    ) AS s(q15)
),
labelled AS (
    SELECT
        q15,
        slot_start,
        date_trunc(getvariable('filters').bucket::VARCHAR, local_time) AS bucket,
        CASE WHEN getvariable('filters').bucket::VARCHAR = 'hour'
             THEN epoch_us(local_time) - epoch_us(slot_start) END AS utc_offset
    FROM slots
)
SELECT q15, bucket, min(slot_start) OVER (PARTITION BY bucket, utc_offset) AS bucket_start
FROM labelled;

-- Budgets (queries/budgets.sql). LiteLLM stores whatever an administrator or its API was
-- given, so every value is bounded before it meets interval or timestamp arithmetic, which
-- fails the whole query (and with it every key's row) on one value out of range.
-- budget_period: a budget_duration ("30s", "30m", "24h", "30d", "1w", "1mo") as an
-- interval; NULL for none, a form LiteLLM does not write, or a period over a century.
CREATE MACRO budget_period_seconds(duration) AS
    TRY_CAST(regexp_extract(trim(duration), '^([0-9]{1,12})(s|m|h|d|w|mo)$', 1) AS BIGINT)
    * CASE regexp_extract(trim(duration), '^([0-9]{1,12})(s|m|h|d|w|mo)$', 2)
        WHEN 's' THEN 1 WHEN 'm' THEN 60 WHEN 'h' THEN 3600 WHEN 'd' THEN 86400
        WHEN 'w' THEN 604800 WHEN 'mo' THEN 2629800 END;
CREATE MACRO budget_period(duration) AS
    CASE WHEN budget_period_seconds(duration) BETWEEN 1 AND 3155760000 THEN
        CASE regexp_extract(trim(duration), '^([0-9]+)(s|m|h|d|w|mo)$', 2)
            WHEN 'mo' THEN to_months(regexp_extract(trim(duration), '^([0-9]+)', 1)::INTEGER)
            ELSE to_seconds(budget_period_seconds(duration))
        END
    END;

-- budget_problem(budget, duration, spend): which of a budget's settings cannot be read:
-- 'budget' (not finite, or negative: no share, left or forecast is shown for it), 'spend'
-- (not finite), 'period' (set, but not a period budget_period reads: the budget still
-- counts, its pace is the week's); NULL when all can. budget_setting: that value, as text.
CREATE MACRO budget_problem(budget, duration, spend) AS
    CASE
        WHEN budget IS NOT NULL AND (NOT isfinite(budget) OR budget < 0) THEN 'budget'
        WHEN spend IS NOT NULL AND NOT isfinite(spend) THEN 'spend'
        WHEN budget IS NOT NULL AND nullif(trim(duration), '') IS NOT NULL
             AND budget_period(duration) IS NULL THEN 'period'
    END;
CREATE MACRO budget_setting(budget, duration, spend) AS
    left(CASE budget_problem(budget, duration, spend)
        WHEN 'budget' THEN lower(budget::VARCHAR)
        WHEN 'spend' THEN lower(spend::VARCHAR)
        WHEN 'period' THEN duration
    END, 40);
-- usable_budget: the budget when it can be read, else NULL
CREATE MACRO usable_budget(budget, duration, spend) AS
    CASE WHEN budget_problem(budget, duration, spend) IS DISTINCT FROM 'budget'
          AND budget_problem(budget, duration, spend) IS DISTINCT FROM 'spend' THEN budget END;

-- burn_per_day(spend, reset_at, duration, week_spend): dollars a day, over the period so far
-- when it began within the filters' range (its spend is LiteLLM's own count since the
-- reset), else over the range (`week_spend`: the stored requests' spend in it). The range
-- is the week before LiteLLM's key list was copied (queries/pages.py, budgets).
CREATE MACRO burn_per_day(spend, reset_at, duration, week_spend) AS
    CASE
        WHEN reset_at - budget_period(duration) > getvariable('filters').range_start::TIMESTAMPTZ
            THEN coalesce(spend, 0) * 86400.0 / NULLIF(
                epoch(getvariable('filters').range_end::TIMESTAMPTZ) - epoch(reset_at - budget_period(duration)), 0
            )
        ELSE coalesce(week_spend, 0) * 86400.0 / NULLIF(
            epoch(getvariable('filters').range_end::TIMESTAMPTZ)
            - epoch(getvariable('filters').range_start::TIMESTAMPTZ),
            0
        )
    END;

-- budget_runs_out_at, budget_forecast(copied, spend, budget, reset_at, per_day): when a
-- budget copied at `copied` runs out at the present pace, and what happens to it:
-- no_budget, invalid (a budget or spend budget_problem cannot read: pass it as is), spent
-- (nothing left), reset_due (the reset time has passed and LiteLLM has not reset it yet),
-- idle (no spend to go by), runs_out (before the reset, or with no reset at all) or lasts
-- (until the reset; or, without one, beyond a century). The days left are a double, so a
-- pace of $0.000005 a week against $100 (385 million years) is compared, never added to a
-- timestamp: a run-out is a date only within a century. It is whole seconds after the
-- copy: the pace is a sum of floating-point spends, which parallel threads add in any
-- order, and a time to the microsecond moved by one between two runs.
CREATE MACRO budget_days_left(spend, budget, per_day) AS
    CASE WHEN budget > coalesce(spend, 0) AND per_day > 0 AND isfinite(budget) AND isfinite(per_day)
         THEN (budget - coalesce(spend, 0)) / per_day END;
CREATE MACRO budget_runs_out_at(copied, spend, budget, per_day) AS
    CASE WHEN budget_days_left(spend, budget, per_day) <= 36525
         THEN copied + to_seconds(round(budget_days_left(spend, budget, per_day) * 86400)::BIGINT) END;
CREATE MACRO budget_forecast(copied, spend, budget, reset_at, per_day) AS
    CASE
        WHEN budget IS NULL THEN 'no_budget'
        WHEN NOT isfinite(budget) OR budget < 0 OR NOT isfinite(coalesce(spend, 0)) THEN 'invalid'
        WHEN coalesce(spend, 0) >= budget THEN 'spent'
        WHEN reset_at IS NOT NULL AND reset_at <= copied THEN 'reset_due'
        WHEN coalesce(per_day, 0) <= 0 OR NOT isfinite(per_day) THEN 'idle'
        WHEN reset_at IS NULL THEN
            CASE WHEN budget_runs_out_at(copied, spend, budget, per_day) IS NULL THEN 'lasts' ELSE 'runs_out' END
        WHEN budget_runs_out_at(copied, spend, budget, per_day) IS NOT NULL
             AND budget_days_left(spend, budget, per_day) * 86400 < epoch(reset_at) - epoch(copied) THEN 'runs_out'
        ELSE 'lasts'
    END;

-- keys_in_scope, users_in_scope: LiteLLM's keys and users this session may see (a
-- student: their own keys and their own user row)
CREATE VIEW keys_in_scope AS
SELECT *
FROM keys k
WHERE key_in_scope(k.api_key_hash);

-- closed_lines_in_scope: the lines of every closed month's statement (contract/statements.py,
-- as closed: never recomputed) this session may see (a student: their own keys' lines)
CREATE VIEW closed_lines_in_scope AS
SELECT *
FROM closed_lines l
WHERE key_in_scope(l.api_key_hash);

CREATE VIEW users_in_scope AS
SELECT *
FROM users u
WHERE getvariable('filters').only_keys::VARCHAR[] IS NULL
   OR u.user_id IN (SELECT user_id FROM keys_in_scope WHERE user_id IS NOT NULL);

-- The Nodes page. On the days the range covers whole, its figures come from each day's
-- serving partials (queries/serving.py, registered per cursor as window_flight,
-- window_perf, window_levels and window_failures); on the rest of the range, its raw
-- spans, from single requests. The runner sets `whole` to the whole days' span when the
-- plan lets the partials answer (no filter but the range), else to an empty span at the
-- range's end, and then the raw spans are the whole range.
CREATE MACRO in_raw_span(t) AS
    in_range(t)
    AND NOT (t >= getvariable('whole').start::TIMESTAMPTZ AND t < getvariable('whole').stop::TIMESTAMPTZ);

CREATE VIEW raw_spans AS
SELECT lo, hi
FROM (
    SELECT
        getvariable('filters').range_start::TIMESTAMPTZ AS lo,
        least(getvariable('filters').range_end::TIMESTAMPTZ, getvariable('whole').start::TIMESTAMPTZ) AS hi
    UNION ALL
    SELECT
        greatest(getvariable('filters').range_start::TIMESTAMPTZ, getvariable('whole').stop::TIMESTAMPTZ),
        getvariable('filters').range_end::TIMESTAMPTZ
)
WHERE lo < hi;

-- flight_segments: in each raw span, how many selected requests each node had in flight
-- from `moment` until `until` (a request that began before the span, or ends after it,
-- counts for its part inside). All events at one instant count together, so a request
-- that ends exactly when another starts does not overlap it; every node's level is also
-- read at the start of every 15-minute slot, so no segment straddles two slots.
CREATE VIEW flight_segments AS
WITH busy AS (
    SELECT f.node, f.start_time, f.end_time, s.lo, s.hi
    FROM overlapping f
    JOIN raw_spans s ON f.start_time < s.hi AND f.end_time > s.lo
),
slots AS (
    SELECT lo, hi, greatest(make_timestamptz(q15 * 900000000), lo) AS slot_start
    FROM (
        SELECT lo, hi, unnest(range(epoch_us(lo) // 900000000, (epoch_us(hi) + 899999999) // 900000000)) AS q15
        FROM raw_spans
    )
),
events AS (
    SELECT lo, hi, node, greatest(start_time, lo) AS moment, 1 AS delta FROM busy
    UNION ALL
    SELECT lo, hi, node, end_time, -1 FROM busy WHERE end_time < hi
    UNION ALL
    SELECT s.lo, s.hi, n.node, s.slot_start, 0
    FROM (SELECT DISTINCT lo, node FROM busy) n
    JOIN slots s ON s.lo = n.lo
),
changes AS (
    SELECT lo, hi, node, moment, sum(delta) AS delta FROM events GROUP BY lo, hi, node, moment
)
SELECT
    node,
    moment,
    sum(delta) OVER w AS in_flight,
    coalesce(lead(moment) OVER w, hi) AS until
FROM changes
WINDOW w AS (PARTITION BY lo, node ORDER BY moment ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

-- short_tokens(x): a count of tokens as a band's label writes it: 500, 2k, 32k, 1500
CREATE MACRO short_tokens(x) AS
    CASE WHEN x >= 1000 AND x % 1000 = 0 THEN (x // 1000)::VARCHAR || 'k' ELSE x::VARCHAR END;

-- flight_slots: per 15-minute slot and node, the most requests in flight at once and
-- the request-microseconds spent in it (the sum over time of the requests in flight)
CREATE VIEW flight_slots AS
SELECT q15, node, peak, request_us FROM window_flight
UNION ALL
SELECT
    epoch_us(moment) // 900000000 AS q15,
    node,
    max(in_flight)::BIGINT AS peak,
    sum(in_flight * (epoch_us(until) - epoch_us(moment)))::BIGINT AS request_us
FROM flight_segments
GROUP BY ALL;

-- failure_slots: the failed requests per 15-minute slot, node and error class
CREATE VIEW failure_slots AS
SELECT q15, node, error_class, status, n FROM window_failures
UNION ALL
SELECT f.q15, f.node, f.error_class, f.status, count(*) AS n
FROM scoped f
WHERE f.status = 'failure' AND in_raw_span(f.start_time)
GROUP BY ALL;

-- At API prices (settings/price_book.py): the price book's entries, one row each, filled by
-- the runner (queries/runner.py); empty without a price book, and then nothing is priced.
-- valid_from / valid_until are UTC days (until exclusive); NULL is open.
CREATE TABLE price_book (
    model VARCHAR,
    reference VARCHAR,
    input DOUBLE,
    cached_input DOUBLE,
    output DOUBLE,
    taken DATE,
    valid_from DATE,
    valid_until DATE
);

-- priced(rows): the rows of the view named `rows` (scoped_sums, or scoped: single requests
-- and rollup rows alike) with the price of their model on their UTC day: `priced` (the
-- model has a price that day, or the request failed), `reference` (the API model priced),
-- `taken` (when its prices were read), `api_cost` (USD; NULL when not priced, never 0).
-- The one definition of the cost: uncached prompt tokens at the input price, cached ones
-- at the cached-input price, completion tokens (reasoning is part of them) at the output
-- price. A failed request costs nothing (no API bills an error; LiteLLM's spend is 0 too):
-- it is priced at 0 when its model has a price, and so is a failure before routing (no
-- node: it never reached a model); a failure of a model without a price is "not priced"
-- like the model's other requests, so that model never reads $0.00. Without a price book
-- nothing is priced, failures neither. A rollup row's day is that of its first
-- request: a day's rollup is one UTC day, and the runner reads a month's rows merged only
-- when no price changes within it (so any day of the month has the month's price).
CREATE MACRO priced(rows) AS TABLE
SELECT
    r.*,
    coalesce(p.model IS NOT NULL OR (r.status = 'failure' AND r.node = 'unknown' AND b.entries > 0), false)
        AS priced,
    p.reference,
    p.taken,
    CASE
        WHEN p.model IS NULL AND NOT (r.status = 'failure' AND r.node = 'unknown' AND b.entries > 0) THEN NULL
        WHEN r.status = 'failure' THEN 0.0
        ELSE ((r.prompt_sum - r.cached_sum) * p.input + r.cached_sum * p.cached_input
              + r.completion_sum * p.output) / 1e6
    END AS api_cost
FROM query_table(rows) r
CROSS JOIN (SELECT count(*) AS entries FROM price_book) b
LEFT JOIN price_book p
    ON p.model = r.model_group
    AND (p.valid_from IS NULL OR (r.first_start AT TIME ZONE 'UTC')::DATE >= p.valid_from)
    AND (p.valid_until IS NULL OR (r.first_start AT TIME ZONE 'UTC')::DATE < p.valid_until);

-- The measures over priced(...) rows: the cost at API prices (NULL when nothing is
-- priced: "not priced", never 0), and what is and is not priced.
CREATE MACRO api_cost_usd(r) AS sum(r.api_cost);
CREATE MACRO priced_spend_usd(r) AS coalesce(sum(r.spend_sum) FILTER (WHERE r.priced), 0);
CREATE MACRO priced_requests(r) AS coalesce(sum(r.n) FILTER (WHERE r.priced), 0)::BIGINT;
CREATE MACRO unpriced_requests(r) AS coalesce(sum(r.n) FILTER (WHERE NOT r.priced), 0)::BIGINT;
CREATE MACRO priced_tokens(r) AS
    coalesce(sum(r.prompt_sum + r.completion_sum) FILTER (WHERE r.priced), 0)::BIGINT;
CREATE MACRO unpriced_tokens(r) AS
    coalesce(sum(r.prompt_sum + r.completion_sum) FILTER (WHERE NOT r.priced), 0)::BIGINT;

-- statement_lines(rows): a statement's lines over the rows of the view named `rows`
-- (scoped_sums for a month; single requests for the late ones of a closed month):
-- per person, key and client, the requests, tokens by kind, what LiteLLM booked, and the
-- cost at API prices at the price in force on each request's day (`priced`); the key's
-- team and budget as LiteLLM's key list says now. Every line, nothing folded: a
-- statement names everyone it bills (queries/statement_lines.sql, queries/statements.py).
CREATE MACRO statement_lines(rows) AS TABLE
SELECT
    r."user"::VARCHAR AS "user",
    r.key_alias::VARCHAR AS key_alias,
    r.api_key_hash::VARCHAR AS api_key_hash,
    any_value(k.key_name)::VARCHAR AS key_name,
    any_value(k.team_id)::VARCHAR AS team_id,
    r.client::VARCHAR AS client,
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.cached_tokens(r) AS prompt_cached_tokens,
    metric.uncached_prompt_tokens(r) AS prompt_uncached_tokens,
    metric.completion_tokens(r) AS completion_tokens,
    metric.reasoning_tokens(r) AS reasoning_tokens,
    metric.spend_usd(r) AS spend_usd,
    api_cost_usd(r) AS api_cost_usd,
    unpriced_requests(r) AS unpriced_requests,
    any_value(k.max_budget)::DOUBLE AS max_budget_usd,
    any_value(k.budget_duration)::VARCHAR AS budget_duration
FROM priced(rows) r
LEFT JOIN keys_in_scope k ON k.api_key_hash::VARCHAR = r.api_key_hash::VARCHAR
GROUP BY r."user", r.key_alias, r.api_key_hash, r.client;

-- top_models(top): the `top` busiest model groups in the filters (the Nodes page's rows per
-- model are theirs: its tables and charts per model stay small whatever the data)
CREATE MACRO top_models(top) AS TABLE
SELECT model
FROM (SELECT r.model_group::VARCHAR AS model, sum(r.n) AS requests FROM scoped_sums r GROUP BY r.model_group)
QUALIFY row_number() OVER (ORDER BY requests DESC, model) <= top;

-- kept_names(measures, top, keep, shown): which names of a breakdown are shown on their own
-- row: `measures` (a query of `name` and `measure`, larger first; a list compares item by
-- item) ranked, the first `top` kept, and `keep` (the highlighted user) kept whatever its
-- rank (whole, or as shown); or, with `shown` (a list of shown names: those the whole page shows, for the
-- highlighted user's part of it), exactly those. The others are folded into one row.
CREATE MACRO kept_names(measures, top, keep, shown) AS TABLE
SELECT
    name,
    CASE
        WHEN shown IS NOT NULL THEN coalesce(list_contains(shown, shown_name(name)), false)
        ELSE row_number() OVER (ORDER BY measure DESC, name) <= top OR coalesce(name_in([keep], name), false)
    END AS kept
FROM query_table(measures);
