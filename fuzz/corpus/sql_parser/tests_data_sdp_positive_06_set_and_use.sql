-- SET and USE apply to the definitions after them.
USE CATALOG main;
USE SCHEMA analytics;
SET spark.sql.shuffle.partitions = 8;
SET pipelines.reset.allowed = false;

CREATE MATERIALIZED VIEW totals AS
SELECT 1 AS id, 10 AS total;

USE SCHEMA staging;
CREATE MATERIALIZED VIEW totals_copy AS
SELECT * FROM analytics.totals;
