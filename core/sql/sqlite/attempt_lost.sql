-- attempt_lost: logs an attempt whose lease another claimant took over.
--
-- ?1 = job_id: the job (integer)
-- ?2 = token: the attempt's token (integer)
-- ?3 = owner_host: its owner's host id (text)
-- ?4 = owner_pid: its owner's pid (integer)
-- ?5 = owner_nonce: its owner's nonce (text)
-- ?6 = owner_start_time: its owner's start time, or NULL (integer)
-- ?7 = owner_boot_id: its owner's boot id, or NULL (text)
-- ?8 = started_at: when it started, ms (integer)
-- ?9 = ended_at: now, ms (integer)
-- ?10 = error: who took it over and why (text)
INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
    owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'lease-lost', ?10)
