-- expect: 6:8 reads 'orderz', which is not a dataset of this pipeline
CREATE MATERIALIZED VIEW orders AS SELECT 1 AS id, 2 AS customer_id;
CREATE MATERIALIZED VIEW customers AS SELECT 2 AS id, 'ada' AS name;
CREATE MATERIALIZED VIEW report AS
SELECT o.id, c.name FROM orders o
  JOIN orderz x ON x.id = o.id
  JOIN customers c ON c.id = o.customer_id;
