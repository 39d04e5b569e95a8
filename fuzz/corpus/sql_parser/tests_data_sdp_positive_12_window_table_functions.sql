-- thund extension: Flink-style window table functions.
CREATE STREAMING TABLE bids
AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid', seed => 7);

CREATE STREAMING TABLE bids_per_minute
WITH (output_mode = 'update')
AS SELECT window_start, window_end, count(*) AS bids
FROM TUMBLE(TABLE STREAM bids, DESCRIPTOR(date_time), INTERVAL '1' MINUTE)
GROUP BY window_start, window_end;

CREATE STREAMING TABLE bids_hopping
WITH (output_mode = 'update')
AS SELECT window_start, auction, max(price) AS top
FROM HOP(TABLE STREAM bids, DESCRIPTOR(date_time), INTERVAL '10' SECONDS, INTERVAL '1' MINUTE)
GROUP BY window_start, auction;

CREATE STREAMING TABLE bidder_sessions
WITH (output_mode = 'complete')
AS SELECT bidder, window_start, count(*) AS bids
FROM SESSION(TABLE STREAM bids PARTITION BY bidder, DESCRIPTOR(date_time), INTERVAL '30' SECONDS)
GROUP BY bidder, window_start;
