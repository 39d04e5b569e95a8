-- expect: 3:13 a flow name is a single identifier, not 'sales.f'
CREATE STREAMING TABLE t;
CREATE FLOW sales.f AS INSERT INTO t BY NAME SELECT 1 AS a;
