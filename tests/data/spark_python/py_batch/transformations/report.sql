-- SQL over a Python dataset.
CREATE MATERIALIZED VIEW report AS
SELECT customer, total_cents, total_cents * 100 / sum(total_cents) OVER () AS share_pct
FROM customer_totals;
