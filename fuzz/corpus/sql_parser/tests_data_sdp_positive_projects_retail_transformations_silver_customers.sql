CREATE OR REFRESH STREAMING TABLE silver_customers;

CREATE FLOW silver_customers_cdc AS AUTO CDC INTO silver_customers
FROM STREAM bronze_customer_changes
KEYS (customer_id)
APPLY AS DELETE WHEN op = 'DELETE'
SEQUENCE BY changed_at
COLUMNS * EXCEPT (op, changed_at)
STORED AS SCD TYPE 1;
