-- A WATERMARK on a streaming read, and one on a derived timestamp.
CREATE STREAMING TABLE readings
AS SELECT * FROM STREAM read_files('landing/readings/', format => 'json');

CREATE STREAMING TABLE per_sensor_minute AS
SELECT sensor, window.start AS minute, avg(value) AS avg_value
FROM STREAM readings WATERMARK ts DELAY OF INTERVAL 30 SECONDS
GROUP BY sensor, window(ts, '1 minute');

CREATE STREAMING TABLE per_sensor_minute_epoch AS
SELECT sensor, window.start AS minute, max(value) AS max_value
FROM STREAM readings WATERMARK timestamp_millis(epoch_ms) AS event_ts DELAY OF INTERVAL 1 MINUTE AS r
GROUP BY sensor, window(event_ts, '1 minute');
