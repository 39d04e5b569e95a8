-- A streaming pipeline over the Nexmark auction benchmark's bid stream,
-- generated deterministically (seed 42): 20,000 events in triggers of 2,500,
-- event time advancing 1,000 events per second, up to 2 s out of order.
CREATE PIPELINE auctions WITH (storage = '.thund/auctions');

CREATE STREAMING TABLE bids
AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid', seed => 42,
                                       rows_per_batch => 2500, total_rows => 20000,
                                       events_per_second => 1000, out_of_orderness => '2s');

-- Bids per auction and 5-second window, emitted once the watermark closes the window.
CREATE STREAMING TABLE bids_per_window AS
SELECT auction, window, count(*) AS bids, max(price) AS top_price
FROM STREAM(bids)
WATERMARK date_time DELAY OF INTERVAL 3 SECONDS
GROUP BY auction, window(date_time, '5 seconds');

-- Running totals per channel, upserted every trigger.
CREATE STREAMING TABLE channel_totals WITH (output_mode = 'update') AS
SELECT channel, count(*) AS bids, round(avg(price), 2) AS avg_price
FROM STREAM(bids) GROUP BY channel;

-- A batch view over the stream's result, refreshed after the stream.
CREATE MATERIALIZED VIEW hot_auctions AS
SELECT auction, sum(bids) AS bids, max(top_price) AS top_price
FROM bids_per_window GROUP BY auction ORDER BY bids DESC, auction LIMIT 5;
