-- thund extension: streaming knobs SDP cannot say, in WITH (...).
CREATE STREAMING TABLE trades
AS SELECT * FROM STREAM read_kafka(bootstrap_servers => 'localhost:9092', topic => 'trades');

CREATE STREAMING TABLE trade_volume
WITH (trigger = '10s', output_mode = 'append', mode = 'incremental',
      allowed_lateness = '5s', idle_timeout = '1m')
AS SELECT symbol, window.start, sum(qty) AS volume
FROM STREAM trades WATERMARK ts DELAY OF INTERVAL 5 SECONDS
GROUP BY symbol, window(ts, '1 minute');

CREATE STREAMING TABLE latest_price;
CREATE FLOW latest_price_flow
WITH (trigger = 'available_now', output_mode = 'update')
AS INSERT INTO latest_price BY NAME
SELECT symbol, max_by(price, ts) AS price FROM STREAM trades GROUP BY symbol;
