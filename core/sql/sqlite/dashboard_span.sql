-- dashboard_span: the jobs table's lowest and highest id. Two subqueries: SQLite
-- reads `min` or `max` off the index only when it is the query's one
-- aggregate (together they scan the table).
--
-- Returns one row: the lowest id, the highest (NULL when empty).
SELECT (SELECT min(id) FROM leasehold_jobs), (SELECT max(id) FROM leasehold_jobs)
