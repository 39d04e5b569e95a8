-- A large, slowly changing state: per-key totals in one-hour windows over
-- {rows} keyed events ({per_trigger} per trigger, 400,000 keys), so the open
-- window's partials grow to ~400K rows while each trigger touches a few
-- percent of them. Filled in by bench/checkpoint/run.py.
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 1, rows_per_batch => {per_trigger}, total_rows => {rows}, keys => 400000,
  events_per_second => 10000);
CREATE STREAMING TABLE per_hour WITH (mode = 'incremental', watermark = 'event_time',
  allowed_lateness = '1 second') AS
SELECT window.start AS hour, key, count(*) AS n, sum(value) AS total
FROM STREAM(ev) GROUP BY window(event_time, '1 hour'), key;
