-- Nexmark q7, its window half: the highest bid per 10-second tumbling window.
-- {rows} bids from the seeded Nexmark generator, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q7_tumble_max WITH (mode = '{mode}') AS
SELECT window_start, window_end, max(price) AS maxprice
FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '10' SECONDS)
WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
GROUP BY window_start, window_end;
