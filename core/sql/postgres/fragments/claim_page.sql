-- fragment claim_page: claims up to ${page_size} of queue ${queue}'s due
-- jobs for the owner (${owner_host}, ${owner_pid}, ${owner_nonce},
-- ${owner_start_time}, ${owner_boot_id}) with a stale window of
-- ${lease_ms}, and, where ${look_for_stale}, names stale running jobs (not
-- ${refused_ids}) as candidates for takeover. Defines `stale` and
-- `claimed`; needs `clock`.
--
-- A queued job that carries the lease of an attempt cancelled while it ran
-- (expires_at, which retry.sql keeps: due at that lease's end) is claimed
-- only if ${watched} names it as 'id:token', that very lease watched by the
-- claimant for its window on its monotonic clock (PGlite: the due time is a
-- reading of the claimant's own wall clock, which can step). NULL claims it
-- once due: on a PostgreSQL server the due time and the claim's `now` are
-- both the server's clock, which no step of a worker's clock moves, and
-- takeovers of running leases are judged on that clock alone too.
--
-- Stale candidates take the page's first slots; due queued jobs (not of a
-- paused queue) fill the rest, by priority, due time, id, skipping rows
-- another claim holds (SKIP LOCKED). `picked` never waits, but it can keep
-- a lock on a row that turned from queued to running under it: a statement
-- that also completes jobs must take its blocking locks (the completion's)
-- before `picked` locks anything, or it could close a cycle with another
-- worker's completion.
--
-- Candidates only: the takeover compares and swaps on what is read here.
-- ${look_for_stale} is a one-time filter: a claim that does not look never
-- scans.
stale AS MATERIALIZED (
    SELECT j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
           j.owner_boot_id, j.claimed_at, j.heartbeat_at, j.lease_ms, j.priority, j.run_at
    FROM leasehold_jobs j
    WHERE ${look_for_stale}::bool AND j.queue = ${queue} AND j.state = 'running'
      AND j.expires_at < (SELECT now FROM clock)
      AND j.id <> ALL(${refused_ids}::int8[])
    ORDER BY j.priority, j.run_at, j.id
    LIMIT ${page_size}),
picked AS (
    SELECT j.ctid FROM leasehold_jobs j
    WHERE j.queue = ${queue} AND j.state = 'queued' AND j.run_at <= (SELECT now FROM clock)
      AND (j.expires_at IS NULL OR ${watched}::text[] IS NULL
           OR j.id::text || ':' || j.token::text = ANY(${watched}::text[]))
      AND NOT EXISTS (SELECT 1 FROM leasehold_paused_queues WHERE queue = ${queue})
    ORDER BY j.priority, j.run_at, j.id
    LIMIT greatest(${page_size} - (SELECT count(*) FROM stale), 0)
    FOR UPDATE SKIP LOCKED),
claimed AS (
    UPDATE leasehold_jobs j SET state = 'running', token = j.token + 1,
        attempts = j.attempts + 1, owner_host = ${owner_host}, owner_pid = ${owner_pid},
        owner_nonce = ${owner_nonce}, owner_start_time = ${owner_start_time},
        owner_boot_id = ${owner_boot_id}, claimed_at = c.now, heartbeat_at = c.now,
        lease_ms = ${lease_ms}, expires_at = c.now + ${lease_ms}
    FROM clock c
    -- ANY(ARRAY(...)) rather than a join: the planner cannot know the page
    -- is small and would hash-join it against a scan of the table. By ctid,
    -- the row versions `picked` locked (the latest ones: a locked row cannot
    -- change under us), so the update fetches each row directly instead of
    -- looking it up again in the primary key. A row claimed and handed back
    -- by others while this statement ran is locked in a version this
    -- statement's snapshot cannot see: the update skips it and it stays
    -- queued for the next claim.
    WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM picked))
    RETURNING j.id, j.token, j.payload::text AS payload, j.attempts, j.max_attempts,
        j.timeout_ms, c.now, j.priority, j.run_at)
