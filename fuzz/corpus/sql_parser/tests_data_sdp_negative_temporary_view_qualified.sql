-- expect: 2:23 a temporary view name cannot be qualified
CREATE TEMPORARY VIEW db.v AS SELECT 1 AS a;
