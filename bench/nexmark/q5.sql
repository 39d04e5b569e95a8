-- Nexmark q5: hot items. The auctions with the most bids in each 10-second
-- window sliding by 2 seconds (a windowed count joined with its per-window max).
-- {rows} bids from the seeded Nexmark generator, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q5 WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS)
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS)
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
   AND AuctionBids.num >= MaxBids.maxn;
