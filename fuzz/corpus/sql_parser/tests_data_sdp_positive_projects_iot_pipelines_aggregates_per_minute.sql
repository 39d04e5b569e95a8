CREATE STREAMING TABLE device_minute
WITH (trigger = '1m', allowed_lateness = '30s', mode = 'incremental')
AS SELECT device_id, window.start AS minute, avg(temperature) AS avg_temperature,
          max(humidity) AS max_humidity
FROM STREAM readings WATERMARK reading_ts DELAY OF INTERVAL 30 SECONDS
GROUP BY device_id, window(reading_ts, '1 minute');

CREATE STREAMING TABLE device_hourly_sliding AS
SELECT device_id, window.start AS hour_start, count(*) AS readings
FROM STREAM readings WATERMARK reading_ts DELAY OF INTERVAL 5 MINUTES
GROUP BY device_id, window(reading_ts, '1 hour', '15 minutes');
