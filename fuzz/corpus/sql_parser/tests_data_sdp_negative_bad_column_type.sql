-- expect: 4:10 column 'amount': bad type 'money'
CREATE MATERIALIZED VIEW t (
  id BIGINT,
  amount money
) AS SELECT 1 AS id, 2 AS amount;
