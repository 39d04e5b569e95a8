CREATE MATERIALIZED VIEW doubled AS
SELECT id, bucket, id * 2 AS twice FROM numbers;

CREATE MATERIALIZED VIEW ranked AS
SELECT bucket, total, row_number() OVER (ORDER BY total DESC) AS position FROM bucket_stats;
