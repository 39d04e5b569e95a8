-- expect: 3:21 option 'materialization' belongs to a dataset
CREATE STREAMING TABLE t;
CREATE FLOW f WITH (materialization = 'incremental') AS INSERT INTO t BY NAME
SELECT * FROM STREAM read_memory('m');
