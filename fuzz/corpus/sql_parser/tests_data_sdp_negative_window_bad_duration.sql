-- expect: 5:35 'please' in interval '5 secs please' is not a number
CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_memory('e');
CREATE STREAMING TABLE agg AS
SELECT window.start, count(*) AS n FROM STREAM events WATERMARK ts DELAY OF INTERVAL 1 SECOND
GROUP BY window(ts, '10 seconds', '5 secs please');
