-- thund extension: every source kind as a table function.
CREATE MATERIALIZED VIEW reference_rates
AS SELECT * FROM read_files('reference/rates/*.csv', format => 'csv', header => 'true');

CREATE STREAMING TABLE dropped_files
AS SELECT * FROM STREAM read_files('landing/drop/', format => 'parquet');

CREATE STREAMING TABLE synthetic_events
AS SELECT * FROM STREAM read_generator(kind => 'keyed_events', seed => 42, rows_per_batch => 500,
                                       total_rows => 10000, out_of_orderness => '2s');

CREATE STREAMING TABLE api_events
AS SELECT * FROM STREAM read_memory('api');

CREATE STREAMING TABLE orders_topic
AS SELECT * FROM STREAM read_kafka(bootstrap_servers => 'broker:9092', topic => 'orders',
                                   starting_offsets => 'latest', `group.id` => 'thund');
