-- purge_results: deletes the recorded results of the jobs purge_jobs.sql
-- will delete, in the purge's transaction.
--
-- ?1 = after_id: the range starts after this id (integer)
-- ?2 = last_id: and ends at this id (integer)
-- ?3 = states: the final states to purge, a JSON array (text)
-- ?4 = cut: purge what finished before this, ms (integer)
-- ?5 = queue: only this queue, or NULL for every queue (text)
DELETE FROM leasehold_results WHERE job_id IN (
    SELECT id FROM leasehold_jobs WHERE id > ?1 AND id <= ?2
    AND state IN (SELECT value FROM json_each(?3)) AND finished_at < ?4
    AND (?5 IS NULL OR queue = ?5))
