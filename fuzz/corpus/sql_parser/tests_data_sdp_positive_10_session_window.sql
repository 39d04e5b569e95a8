-- Session windows per user.
CREATE STREAMING TABLE activity
AS SELECT * FROM STREAM read_files('landing/activity/', format => 'json');

CREATE STREAMING TABLE sessions AS
SELECT user_id, session_window.start AS started, session_window.end AS ended, count(*) AS actions
FROM STREAM activity WATERMARK ts DELAY OF INTERVAL 2 MINUTES
GROUP BY user_id, session_window(ts, '10 minutes');
