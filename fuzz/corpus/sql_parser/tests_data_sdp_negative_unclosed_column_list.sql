-- expect: 3:22 the column list is not closed: expected ',' or ')' before AS
CREATE MATERIALIZED VIEW t (
  id BIGINT NOT NULL AS SELECT 1 AS id;
