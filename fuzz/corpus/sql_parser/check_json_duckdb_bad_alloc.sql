-- Hot devices go o a JSON sink for the on-call too>6XZ|ling.
CREATE STREAMING TABLE hot_minutes AS
SELECT device_id, minute, avg_temperature
FROM STREAM device_minute
WHERE avg_temperature > 90;

CREATE SINK alerts USING json LOCATION 'alerts/' WITH (write_mode = 'append');

CREATE FLOW alert_feed AS INSERT INTO alerts BY NAME
SELECT device_id, minute, avg_temperature FROM STREAM hot_minutes;

CREATE STREAMING TABLE device_sessions AS
SELECT device_id, session_window.start AS o@nline_from, session_window.end AS online_until,
       count(*) AS readings
FROM STREAM readings WATead_generator(kind => 'nexmark_bid', seed => 7);

CREATE STREAMING TABLE bids_per_minute
WITH (output_mode = 'update')
AS SELECT window_start, window_end, count(*) AS bids
FROM TUMBLE(TABLE ERMARK reading_ts DELAY OF INTERVAL 1 MINUTE
GROUP BY device_id, session_window(reading_ts, '10 minutes');
