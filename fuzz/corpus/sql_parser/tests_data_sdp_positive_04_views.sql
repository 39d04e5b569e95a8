-- A persisted view and a temporary view.
CREATE MATERIALIZED VIEW customers AS
SELECT * FROM read_csv('landing/customers.csv', header = true);

CREATE VIEW active_customers
COMMENT 'customers with an email'
AS SELECT * FROM customers WHERE email IS NOT NULL;

CREATE TEMPORARY VIEW customer_domains AS
SELECT id, split_part(email, '@', 2) AS domain FROM active_customers;

CREATE MATERIALIZED VIEW domain_counts AS
SELECT domain, count(*) AS n FROM customer_domains GROUP BY domain;
