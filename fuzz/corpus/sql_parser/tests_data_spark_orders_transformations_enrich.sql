CREATE MATERIALIZED VIEW enriched AS
SELECT o.id, o.customer, c.region, o.cents,
       row_number() OVER (PARTITION BY o.customer ORDER BY o.id) AS nth
FROM orders_raw o
JOIN parquet.`${input}/customers` c ON o.customer = c.customer;

CREATE MATERIALIZED VIEW region_share AS
SELECT region, sum(cents) AS cents, count(DISTINCT customer) AS customers
FROM enriched
GROUP BY region;

CREATE VIEW regions AS SELECT DISTINCT region FROM enriched;
