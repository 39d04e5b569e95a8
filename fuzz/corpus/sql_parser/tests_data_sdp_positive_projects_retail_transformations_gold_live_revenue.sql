-- Revenue per 5-minute window, emitted when the watermark closes the window.
CREATE OR REFRESH STREAMING TABLE gold_revenue_5m
WITH (trigger = '30s', mode = 'incremental')
AS SELECT window.start AS window_start, window.end AS window_end, sum(amount) AS revenue
FROM STREAM silver_orders WATERMARK ordered_at DELAY OF INTERVAL 2 MINUTES
GROUP BY window(ordered_at, '5 minutes');
