-- Spark functions whose DuckDB names or meanings differ (see docs/sql.md).
CREATE MATERIALIZED VIEW events AS
SELECT * FROM read_json('landing/events/*.json');

CREATE MATERIALIZED VIEW enriched AS
SELECT
  nvl(user_id, -1) AS user_id,
  date_format(ts, 'yyyy-MM-dd') AS day,
  dayofweek(ts) AS weekday,
  to_date(day_text, 'dd/MM/yyyy') AS parsed_day,
  size(tags) AS tag_count,
  regexp_extract(url, 'https?://([^/]+)', 1) AS host,
  concat(first_name, ' ', last_name) AS full_name,
  unix_timestamp(ts) AS epoch_seconds,
  `user agent` AS agent
FROM events;

CREATE MATERIALIZED VIEW tags_per_user AS
SELECT user_id, collect_set(tag) AS tags, percentile_approx(score, 0.5) AS median_score
FROM enriched LATERAL VIEW explode(array('a', 'b')) t AS tag
GROUP BY user_id;

CREATE MATERIALIZED VIEW numbers AS SELECT id, id * id AS square FROM range(100);
