-- expect: 3:32 CREATE FLOW cannot list target columns
CREATE STREAMING TABLE t;
CREATE FLOW f AS INSERT INTO t (a, b) SELECT 1, 2;
