-- api_cost_totals: the range at API prices (the price book, setup/views.sql `priced`):
-- what its requests would have cost there, beside LiteLLM's spend. `difference_usd`
-- compares like with like: the cost at API prices minus the spend of the same (priced)
-- requests. Requests of models without a price are counted apart, never as 0.
-- `prices_taken`: when the newest of the prices used were read; `price_entries` 0: there
-- is no price book (the page then shows none of this).
SELECT
    metric.requests(r) AS requests,
    metric.spend_usd(r) AS spend_usd,
    api_cost_usd(r) AS api_cost_usd,
    priced_spend_usd(r) AS priced_spend_usd,
    api_cost_usd(r) - priced_spend_usd(r) AS difference_usd,
    priced_requests(r) AS priced_requests,
    unpriced_requests(r) AS unpriced_requests,
    priced_tokens(r) AS priced_tokens,
    unpriced_tokens(r) AS unpriced_tokens,
    max(r.taken) AS prices_taken,
    (SELECT count(*) FROM price_book)::BIGINT AS price_entries
FROM priced('scoped_sums') r
