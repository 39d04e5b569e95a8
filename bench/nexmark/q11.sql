-- Nexmark q11: bids per bidder session (sessions close after 10 s without a bid).
-- {rows} bids from the seeded Nexmark generator, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q11 WITH (mode = '{mode}') AS
SELECT bidder, count(*) AS bid_count, session_window.start AS starttime,
       session_window.end AS endtime
FROM STREAM(bids) WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
GROUP BY bidder, session_window(date_time, '10 seconds');
