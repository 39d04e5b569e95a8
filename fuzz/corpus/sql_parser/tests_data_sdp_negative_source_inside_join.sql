-- expect: 4:32 read_kafka() must be the whole query of its flow
CREATE MATERIALIZED VIEW dims AS SELECT 1 AS k;
CREATE STREAMING TABLE joined AS
SELECT * FROM dims JOIN STREAM read_kafka(bootstrap_servers => 'b:9092', topic => 't') k ON dims.k = k.k;
