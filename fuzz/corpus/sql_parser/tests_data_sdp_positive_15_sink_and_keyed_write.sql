-- thund extension: a file sink, and key-checkpointed writes.
CREATE STREAMING TABLE signups (
  user_id BIGINT NOT NULL,
  email STRING
)
WITH (keyed_write.keys = (user_id), keyed_write.buckets = 16)
AS SELECT * FROM STREAM read_files('landing/signups/', format => 'json');

CREATE SINK signups_export
USING parquet
LOCATION 'exports/signups/'
OPTIONS ('compression' = 'zstd')
WITH (write_mode = 'append');

CREATE FLOW export_signups AS INSERT INTO signups_export BY NAME
SELECT user_id, email FROM STREAM signups;
