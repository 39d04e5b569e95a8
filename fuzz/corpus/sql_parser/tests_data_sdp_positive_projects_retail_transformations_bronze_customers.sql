-- Change feed of the customer master data.
CREATE OR REFRESH STREAMING TABLE bronze_customer_changes
AS SELECT * FROM STREAM read_files('landing/customers/', format => 'json');
