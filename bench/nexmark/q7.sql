-- Nexmark q7: highest bid. The bids whose price is the highest of their
-- 10-second tumbling window (the window's max joined back to the bids).
-- {rows} bids from the seeded Nexmark generator, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q7 WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT B.auction, B.price, B.bidder, B.date_time
FROM STREAM(bids) B
JOIN (
  SELECT max(price) AS maxprice, window_end AS date_time
  FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '10' SECONDS)
  GROUP BY window_start, window_end
) B1 ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECONDS AND B1.date_time;
