-- dashboard_span: the jobs table's lowest and highest id.
--
-- Returns one row: the lowest id, the highest (NULL when empty).
SELECT min(id), max(id) FROM leasehold_jobs
