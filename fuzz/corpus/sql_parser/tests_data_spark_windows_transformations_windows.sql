-- Event-time windows as Spark writes them: a watermark in the query, window()
-- in GROUP BY, window.start / window.end in the SELECT. Append mode: a window
-- is written once the watermark passes its end.
CREATE STREAMING TABLE readings AS
SELECT * FROM STREAM read_files('${input}/readings', format => 'parquet');

CREATE STREAMING TABLE per_minute AS
SELECT window.start AS window_start, window.end AS window_end, sensor,
       count(*) AS n, sum(value) AS total, max(value) AS peak
FROM STREAM(readings) WATERMARK ts DELAY OF INTERVAL 10 SECONDS
GROUP BY window(ts, '1 minute'), sensor;

CREATE STREAMING TABLE sliding AS
SELECT window.start AS window_start, count(*) AS n
FROM STREAM(readings) WATERMARK ts DELAY OF INTERVAL 10 SECONDS
GROUP BY window(ts, '1 minute', '30 seconds');
