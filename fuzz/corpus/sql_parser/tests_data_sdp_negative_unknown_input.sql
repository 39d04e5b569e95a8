-- expect: 2:45 reads 'missing_table', which is not a dataset of this pipeline
CREATE MATERIALIZED VIEW t AS SELECT * FROM missing_table;
