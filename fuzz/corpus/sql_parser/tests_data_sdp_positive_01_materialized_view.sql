-- CREATE MATERIALIZED VIEW with a column list, comment, partitioning and
-- table properties; the query reads a batch of Parquet files.
CREATE MATERIALIZED VIEW orders (
  order_id BIGINT NOT NULL COMMENT 'order key',
  customer_id BIGINT,
  amount DECIMAL(12, 2),
  order_date DATE
)
COMMENT 'orders loaded from the landing zone'
PARTITIONED BY (order_date)
TBLPROPERTIES ('quality' = 'bronze', 'owner' = 'sales')
AS SELECT order_id, customer_id, amount, order_date
FROM read_parquet('landing/orders/*.parquet');

CREATE MATERIALIZED VIEW revenue_by_day AS
SELECT order_date, sum(amount) AS revenue, count(*) AS orders
FROM orders
GROUP BY order_date;
