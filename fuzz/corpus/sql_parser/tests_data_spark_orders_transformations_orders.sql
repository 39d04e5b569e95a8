-- Batch: CSV and Parquet files read as Spark reads them, a temporary view,
-- aggregates, a join, a window function and a persisted view.
CREATE TEMPORARY VIEW orders_raw AS
SELECT * FROM csv.`${input}/orders.csv` WITH ('header' = 'true', 'inferSchema' = 'true');

CREATE MATERIALIZED VIEW customer_totals
COMMENT 'orders and cents per customer'
AS SELECT customer, count(*) AS orders, sum(cents) AS total_cents
FROM orders_raw
GROUP BY customer;

CREATE MATERIALIZED VIEW big_customers AS
SELECT customer, total_cents FROM customer_totals WHERE total_cents > 1000;
