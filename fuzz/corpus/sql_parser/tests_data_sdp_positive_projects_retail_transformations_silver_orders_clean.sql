CREATE OR REFRESH STREAMING TABLE silver_orders (
  order_id BIGINT NOT NULL,
  customer_id BIGINT,
  amount DECIMAL(12, 2),
  status STRING,
  ordered_at TIMESTAMP,
  CONSTRAINT has_order_id EXPECT (order_id IS NOT NULL) ON VIOLATION FAIL UPDATE,
  CONSTRAINT positive_amount EXPECT (amount > 0) ON VIOLATION DROP ROW,
  CONSTRAINT known_status EXPECT (status IN ('NEW', 'PAID', 'SHIPPED', 'CANCELLED'))
)
COMMENT 'validated orders'
AS SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer_id AS BIGINT) AS customer_id,
  CAST(amount AS DECIMAL(12, 2)) AS amount,
  upper(status) AS status,
  to_timestamp(ordered_at) AS ordered_at
FROM STREAM bronze_orders;
