-- expect: 4:32 CREATE FLOW needs INSERT INTO ... BY NAME
-- expect: 5:1 unsupported statement 'GRANT'
-- expect: 7:32 option 'trigger' belongs to a flow
CREATE FLOW a AS INSERT INTO t SELECT 1;
GRANT SELECT ON t TO bob;
CREATE STREAMING TABLE t;
CREATE STREAMING TABLE u WITH (trigger = '1s');
