-- Nexmark q3: local item suggestion. Sellers in Oregon, Idaho or California
-- of auctions in category 10: an unbounded join of two streams.
-- {rows} combined Nexmark events (persons and auctions cut from one seeded
-- sequence), {per_trigger} per trigger; {mode} is recompute or incremental.
CREATE STREAMING TABLE persons AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_person', seed => 11, rows_per_batch => {per_trigger},
  total_rows => {rows}, events_per_second => 10000, out_of_orderness => '1s');
CREATE STREAMING TABLE auctions AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_auction', seed => 11, rows_per_batch => {per_trigger},
  total_rows => {rows}, events_per_second => 10000, out_of_orderness => '1s');

CREATE STREAMING TABLE q3 WITH (mode = '{mode}') AS
SELECT P.name, P.city, P.state, A.id
FROM STREAM(auctions) AS A INNER JOIN STREAM(persons) AS P ON A.seller = P.id
WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
