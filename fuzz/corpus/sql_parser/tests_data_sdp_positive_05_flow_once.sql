-- A backfill flow that runs once (INSERT INTO ONCE), next to the live flow.
CREATE STREAMING TABLE sales;

CREATE FLOW live_sales AS INSERT INTO sales BY NAME
SELECT * FROM STREAM read_files('landing/sales/', format => 'parquet');

CREATE FLOW backfill_2023 AS INSERT INTO ONCE sales BY NAME
SELECT * FROM read_parquet('archive/sales/2023/*.parquet');
