-- CREATE OR REFRESH and double-quoted strings, as Databricks projects write them.
CREATE OR REFRESH STREAMING TABLE bronze_orders
COMMENT "raw orders"
TBLPROPERTIES ("quality" = "bronze")
AS SELECT * FROM STREAM read_files('landing/orders/', format => 'json');

CREATE OR REFRESH MATERIALIZED VIEW shipped_orders
AS SELECT * FROM bronze_orders WHERE status = "SHIPPED";
