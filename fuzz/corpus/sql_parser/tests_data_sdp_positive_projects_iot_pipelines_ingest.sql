-- Sensor readings from a file-drop directory, typed and checked.
CREATE STREAMING TABLE raw_readings
AS SELECT * FROM STREAM read_files('drop/readings/', format => 'csv', header => 'true');

CREATE STREAMING TABLE readings (
  device_id STRING NOT NULL,
  temperature DOUBLE,
  humidity DOUBLE,
  reading_ts TIMESTAMP,
  CONSTRAINT plausible_temperature EXPECT (temperature BETWEEN -50 AND 150) ON VIOLATION DROP ROW
)
AS SELECT
  device_id,
  CAST(temperature AS DOUBLE) AS temperature,
  CAST(humidity AS DOUBLE) AS humidity,
  to_timestamp(reading_ts, 'yyyy-MM-dd HH:mm:ss') AS reading_ts
FROM STREAM raw_readings;
