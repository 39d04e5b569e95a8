-- Tumbling and hopping windows with Spark's window().
CREATE STREAMING TABLE page_views
AS SELECT * FROM STREAM read_files('landing/views/', format => 'json');

CREATE STREAMING TABLE views_per_10s AS
SELECT window.start, window.end, count(*) AS views
FROM STREAM page_views WATERMARK ts DELAY OF INTERVAL 10 SECONDS
GROUP BY window(ts, '10 seconds');

CREATE STREAMING TABLE views_sliding AS
SELECT window, url, count(*) AS views
FROM STREAM page_views WATERMARK ts DELAY OF INTERVAL 1 MINUTE
GROUP BY url, window(ts, '5 minutes', '1 minute');
