-- Joins and deduplication in the incremental mode, over Nexmark persons,
-- auctions and bids cut from one seeded event sequence (seed 7): 40,000
-- events, event time advancing 2,000 events per second, up to 1 s out of order.
CREATE PIPELINE joins WITH (storage = '.thund/joins');

CREATE STREAMING TABLE persons AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_person', seed => 7, rows_per_batch => 5000, total_rows => 40000,
  events_per_second => 2000, out_of_orderness => '1s');
CREATE STREAMING TABLE auctions AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_auction', seed => 7, rows_per_batch => 5000, total_rows => 40000,
  events_per_second => 2000, out_of_orderness => '1s');
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_bid', seed => 7, rows_per_batch => 5000, total_rows => 40000,
  events_per_second => 2000, out_of_orderness => '1s');

-- A window join: sellers who registered and opened an auction in the same
-- 5-second window (Nexmark q8), emitted when the window closes.
CREATE STREAMING TABLE new_sellers WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT p.window_start, p.id, p.name, count(*) AS auctions
FROM TUMBLE(TABLE persons, DESCRIPTOR(date_time), INTERVAL '5' SECONDS) AS p
JOIN TUMBLE(TABLE auctions, DESCRIPTOR(date_time), INTERVAL '5' SECONDS) AS a
  ON p.window_start = a.window_start AND p.id = a.seller
GROUP BY p.window_start, p.id, p.name;

-- An interval join: bids placed within 3 seconds of their auction opening.
-- Each side keeps its rows only as long as the bound lets a later row match.
CREATE STREAMING TABLE early_bids WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT a.id AS auction, a.category, b.bidder, b.price
FROM STREAM(auctions) AS a JOIN STREAM(bids) AS b
  ON a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.date_time + INTERVAL 3 SECONDS;

-- Deduplication: each bidder's first bid (by event time), emitted once the
-- watermark passes it.
CREATE STREAMING TABLE first_bids WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT bidder, auction, price, date_time FROM (
  SELECT *, row_number() OVER (PARTITION BY bidder ORDER BY date_time) AS rn FROM STREAM(bids)
) AS ranked WHERE rn = 1;
