-- dashboard_now: the server's clock.
--
-- Returns one row: now (ms since the Unix epoch).
SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint)
