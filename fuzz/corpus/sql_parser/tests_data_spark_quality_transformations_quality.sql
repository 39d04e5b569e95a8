-- Expectations: drop rows that break a rule, and fail on one that holds.
CREATE TEMPORARY VIEW readings AS
SELECT * FROM csv.`${input}/readings.csv` WITH ('header' = 'true', 'inferSchema' = 'true');

CREATE MATERIALIZED VIEW valid_readings (
  CONSTRAINT known_sensor EXPECT (sensor IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT in_range EXPECT (value BETWEEN -50 AND 150) ON VIOLATION DROP ROW,
  CONSTRAINT has_id EXPECT (id IS NOT NULL) ON VIOLATION FAIL UPDATE
) AS SELECT id, sensor, value FROM readings;

CREATE MATERIALIZED VIEW sensor_stats AS
SELECT sensor, count(*) AS n, min(value) AS lo, max(value) AS hi
FROM valid_readings GROUP BY sensor;
