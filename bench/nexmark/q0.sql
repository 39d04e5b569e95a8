-- Nexmark q0: passthrough.
-- {rows} bids from the seeded Nexmark generator, {per_trigger} per trigger; {mode} is
-- recompute or incremental (bench/nexmark/run.py fills them in).
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => {per_trigger}, total_rows => {rows},
  events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q0 WITH (mode = '{mode}') AS
SELECT auction, bidder, price, date_time FROM STREAM(bids);
