-- Streaming: a streaming table from a file drop, streaming tables over it,
-- two flows into one table, a materialized view, and a Parquet sink.
CREATE STREAMING TABLE events AS
SELECT * FROM STREAM read_files('${input}/events', format => 'parquet');

CREATE STREAMING TABLE clicks AS
SELECT id, user_id, page FROM STREAM(events) WHERE kind = 'click';

CREATE STREAMING TABLE activity;
CREATE FLOW activity_clicks AS INSERT INTO activity BY NAME
SELECT user_id, 'click' AS source FROM STREAM(clicks);
CREATE FLOW activity_other AS INSERT INTO activity BY NAME
SELECT kind AS source, user_id FROM STREAM(events) WHERE kind <> 'click';

CREATE MATERIALIZED VIEW per_kind AS
SELECT kind, count(*) AS n, count(DISTINCT user_id) AS users FROM events GROUP BY kind;

CREATE SINK exported USING parquet LOCATION '${output}/exported';
CREATE FLOW export_clicks AS INSERT INTO exported BY NAME
SELECT id, page FROM STREAM(clicks);
