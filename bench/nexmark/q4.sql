-- Nexmark q4: the average closing price of auctions per category. Each
-- auction's closing price is its highest bid between its start and expiry.
-- The 2 s watermark is the one the Nexmark suite's Flink tables declare; with
-- it the incremental mode lets go of an auction once W passes its expiry and
-- of a bid once W passes its time (no auction still to come starts before).
-- {rows} combined Nexmark events, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE auctions AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_auction', seed => 11, rows_per_batch => {per_trigger},
  total_rows => {rows}, events_per_second => 10000, out_of_orderness => '1s');
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q4 WITH (mode = '{mode}', output_mode = 'complete',
  watermark = 'date_time', allowed_lateness = '2 seconds') AS
SELECT Q.category, avg(Q.final) AS avg
FROM (
  SELECT max(B.price) AS final, A.category
  FROM STREAM(auctions) A, STREAM(bids) B
  WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
  GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
