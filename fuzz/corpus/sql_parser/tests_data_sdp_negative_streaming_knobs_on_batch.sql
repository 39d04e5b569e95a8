-- expect: 3:26 has streaming settings, but its target 'per_minute' is a materialized_view
CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_memory('e');
CREATE MATERIALIZED VIEW per_minute AS
SELECT window.start, count(*) AS n FROM STREAM events WATERMARK ts DELAY OF INTERVAL 5 SECONDS
GROUP BY window(ts, '1 minute');
