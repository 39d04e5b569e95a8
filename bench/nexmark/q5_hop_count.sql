-- Nexmark q5, its window half: bids per auction in 10-second windows sliding by 2 s.
-- {rows} bids from the seeded Nexmark generator, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q5_hop_count WITH (mode = '{mode}') AS
SELECT auction, count(*) AS num, window_start, window_end
FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS)
WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
GROUP BY auction, window_start, window_end;
