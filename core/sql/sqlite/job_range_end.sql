-- job_range_end: the last id of the next range of jobs, in id order (a
-- purge's walk). Read on its own, not in the purge's write transaction: a
-- read first would make that transaction's write fail at once when another
-- connection wrote since.
--
-- ?1 = after_id: the range starts after this id (integer)
-- ?2 = range_rows: the range's length in rows (integer)
--
-- Returns one row: the range's last id, or NULL past the last job.
SELECT max(id) FROM (SELECT id FROM leasehold_jobs WHERE id > ?1 ORDER BY id
                     LIMIT CAST(?2 AS INTEGER))
