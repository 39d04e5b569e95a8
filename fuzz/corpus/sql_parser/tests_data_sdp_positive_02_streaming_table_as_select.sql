-- CREATE STREAMING TABLE ... AS SELECT from a STREAM, in both spellings.
CREATE STREAMING TABLE clicks
AS SELECT * FROM STREAM read_files('landing/clicks/', format => 'json');

CREATE STREAMING TABLE clicks_clean AS
SELECT user_id, url, ts FROM STREAM(clicks) WHERE url IS NOT NULL;

CREATE STREAMING TABLE clicks_mobile AS
SELECT user_id, url, ts FROM STREAM clicks_clean c WHERE c.url LIKE 'm.%';
