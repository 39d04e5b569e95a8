-- expect: 3:1 unsupported statement 'DROP'
CREATE MATERIALIZED VIEW t AS SELECT 1 AS a;
DROP TABLE t;
