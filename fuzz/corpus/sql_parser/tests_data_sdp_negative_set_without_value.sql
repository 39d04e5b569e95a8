-- expect: 2:1 SET needs a value
SET spark.sql.shuffle.partitions;
CREATE MATERIALIZED VIEW t AS SELECT 1 AS a;
