-- Recovery of a large state: per-key totals in one-hour windows over 2M
-- keyed events among 3M keys, 500,000 events per trigger, so the open
-- window's partials reach ~1.5M rows (a string key, a decimal sum) after
-- three triggers. bench/checkpoint/run.py stops the run there and times the
-- restore of the rerun. {rows} and {per_trigger} are not used.
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 1, rows_per_batch => 500000, total_rows => 4000000, keys => 3000000,
  events_per_second => 100000);
CREATE STREAMING TABLE per_hour WITH (mode = 'incremental', watermark = 'event_time',
  allowed_lateness = '1 second') AS
SELECT window.start AS hour, key, count(*) AS n, sum(value) AS total
FROM STREAM(ev) GROUP BY window(event_time, '1 hour'), key;
