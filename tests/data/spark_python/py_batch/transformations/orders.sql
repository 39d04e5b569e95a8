CREATE MATERIALIZED VIEW orders AS
SELECT * FROM csv.`${input}/orders.csv` WITH ('header' = 'true', 'inferSchema' = 'true');
