-- USING, OPTIONS and LOCATION on stored datasets; materialization.
CREATE MATERIALIZED VIEW daily_csv
USING csv
LOCATION 'out/daily/'
OPTIONS ('header' = 'true', 'delimiter' = ';')
WITH (materialization = 'incremental')
AS SELECT current_date() AS day, 1 AS n;
