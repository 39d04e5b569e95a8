-- expect: 3:30 EXPECT needs a predicate in parentheses
CREATE MATERIALIZED VIEW t (
  CONSTRAINT positive EXPECT a > 0
) AS SELECT 1 AS a;
