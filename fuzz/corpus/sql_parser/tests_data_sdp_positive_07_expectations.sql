-- Expectations in the column list: warn (no clause), drop and fail.
CREATE STREAMING TABLE payments (
  payment_id BIGINT,
  amount DOUBLE,
  currency STRING,
  CONSTRAINT has_id EXPECT (payment_id IS NOT NULL) ON VIOLATION FAIL UPDATE,
  CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW,
  CONSTRAINT known_currency EXPECT (currency IN ('EUR', 'USD', 'NOK'))
)
AS SELECT * FROM STREAM read_files('landing/payments/', format => 'json');

-- Constraints without columns: the schema stays inferred.
CREATE MATERIALIZED VIEW big_payments (
  CONSTRAINT big EXPECT (amount >= 1000) ON VIOLATION DROP ROW
) AS SELECT payment_id, amount FROM payments;
