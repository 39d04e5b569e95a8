-- A streaming table declared without a query, fed by two flows.
CREATE STREAMING TABLE raw_eu AS SELECT * FROM STREAM read_files('landing/eu/', format => 'json');
CREATE STREAMING TABLE raw_us AS SELECT * FROM STREAM read_files('landing/us/', format => 'json');

CREATE STREAMING TABLE all_events (
  region STRING,
  event_id BIGINT,
  payload STRING
) COMMENT 'events from every region';

CREATE FLOW from_eu AS INSERT INTO all_events BY NAME
SELECT 'eu' AS region, event_id, payload FROM STREAM(raw_eu);

CREATE FLOW from_us
COMMENT 'the US feed'
AS INSERT INTO all_events BY NAME
SELECT 'us' AS region, event_id, payload FROM STREAM raw_us;
