-- fragment settle_journal: journals each completion of `done`
-- (settle_keep.sql or settle_delete.sql) as 'done' in the settlements
-- journal, in the completion's own statement; needs `clock`.
done_journal AS (
    INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
        owner_nonce, outcome, at)
    SELECT id, queue, attempts, token, owner_host, owner_pid, owner_nonce, 'done',
        (SELECT now FROM clock)
    FROM done)
