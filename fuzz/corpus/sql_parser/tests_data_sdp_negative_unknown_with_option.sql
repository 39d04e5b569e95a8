-- expect: 3:7 unknown option 'triger'
CREATE STREAMING TABLE t
WITH (triger = '10s')
AS SELECT * FROM STREAM read_memory('m');
