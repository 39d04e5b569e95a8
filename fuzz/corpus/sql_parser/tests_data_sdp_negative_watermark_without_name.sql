-- expect: 4:30 a WATERMARK expression needs a name
CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_memory('e');
CREATE STREAMING TABLE agg AS SELECT count(*) AS n
FROM STREAM events WATERMARK to_timestamp(s) DELAY OF INTERVAL 1 SECOND;
