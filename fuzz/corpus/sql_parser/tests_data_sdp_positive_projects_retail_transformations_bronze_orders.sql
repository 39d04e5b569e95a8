-- Raw orders as they land, one JSON file at a time.
CREATE OR REFRESH STREAMING TABLE bronze_orders
COMMENT 'orders as delivered by the shop'
TBLPROPERTIES ('quality' = 'bronze')
AS SELECT * FROM STREAM read_files('landing/orders/', format => 'json');
