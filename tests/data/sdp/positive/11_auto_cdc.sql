-- AUTO CDC into SCD type 1 and type 2 tables.
CREATE STREAMING TABLE customer_changes
AS SELECT * FROM STREAM read_files('landing/cdc/customers/', format => 'json');

CREATE STREAMING TABLE customers_current;
CREATE FLOW customers_scd1 AS AUTO CDC INTO customers_current
FROM STREAM customer_changes
KEYS (customer_id)
APPLY AS DELETE WHEN operation = 'DELETE'
SEQUENCE BY sequence_num
COLUMNS * EXCEPT (operation, sequence_num)
STORED AS SCD TYPE 1;

CREATE STREAMING TABLE customers_history;
CREATE FLOW customers_scd2 AS AUTO CDC INTO customers_history
FROM stream(customer_changes)
KEYS (customer_id)
SEQUENCE BY sequence_num
STORED AS SCD TYPE 2;

-- Only the listed columns, and history tracked on chosen columns.
CREATE STREAMING TABLE customers_names;
CREATE FLOW customers_names AS AUTO CDC INTO customers_names
FROM STREAM customer_changes
KEYS (customer_id)
SEQUENCE BY sequence_num
COLUMNS (customer_id, name, city)
STORED AS SCD TYPE 2
TRACK HISTORY ON (name);

CREATE STREAMING TABLE customers_but_city;
CREATE FLOW customers_but_city AS AUTO CDC INTO customers_but_city
FROM STREAM customer_changes
KEYS (customer_id)
SEQUENCE BY sequence_num
COLUMNS * EXCEPT (operation)
STORED AS SCD TYPE 2
TRACK HISTORY ON * EXCEPT (city);
