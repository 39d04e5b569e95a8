CREATE OR REFRESH MATERIALIZED VIEW gold_revenue_per_customer
COMMENT 'paid revenue per customer'
AS SELECT c.customer_id, c.name, sum(o.amount) AS revenue, count(*) AS orders
FROM silver_orders o
JOIN silver_customers c ON o.customer_id = c.customer_id
WHERE o.status IN ('PAID', 'SHIPPED')
GROUP BY c.customer_id, c.name;

CREATE OR REFRESH MATERIALIZED VIEW gold_daily_revenue AS
SELECT date_trunc('day', ordered_at) AS day, sum(amount) AS revenue
FROM silver_orders
GROUP BY date_trunc('day', ordered_at);
