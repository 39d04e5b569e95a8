-- Nexmark q8: new users. Persons who opened an auction in the same 10-second
-- tumbling window in which they registered (a window join of two streams).
-- {rows} combined Nexmark events (persons and auctions cut from one seeded
-- sequence), {per_trigger} per trigger; {mode} is recompute or incremental.
CREATE STREAMING TABLE persons AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_person', seed => 11, rows_per_batch => {per_trigger},
  total_rows => {rows}, events_per_second => 10000, out_of_orderness => '1s');
CREATE STREAMING TABLE auctions AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_auction', seed => 11, rows_per_batch => {per_trigger},
  total_rows => {rows}, events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q8 WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name, window_start AS starttime, window_end AS endtime
  FROM TUMBLE(TABLE persons, DESCRIPTOR(date_time), INTERVAL '10' SECONDS)
  GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller, window_start AS starttime, window_end AS endtime
  FROM TUMBLE(TABLE auctions, DESCRIPTOR(date_time), INTERVAL '10' SECONDS)
  GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
