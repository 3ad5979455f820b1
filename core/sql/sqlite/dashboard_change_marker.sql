-- dashboard_change_marker: a text that changes when jobs change state: the newest
-- and oldest job, the newest settlement, the running jobs' count and tokens
-- (a claim), the dead and cancelled jobs' count (a retry), the paused
-- queues, and the schedules (added or removed, paused or resumed, a slot
-- passed).
--
-- Returns one row: the marker (text).
SELECT (SELECT coalesce(max(id), 0) FROM leasehold_jobs) || ':' ||
       (SELECT coalesce(min(id), 0) FROM leasehold_jobs) || ':' ||
       (SELECT coalesce(max(id), 0) FROM leasehold_settlements) || ':' ||
       (SELECT count(*) || '/' || coalesce(sum(token), 0) FROM leasehold_jobs WHERE state = 'running') || ':' ||
       (SELECT count(*) FROM leasehold_jobs INDEXED BY leasehold_jobs_parked
        WHERE state IN ('dead', 'cancelled')) || ':' ||
       (SELECT count(*) FROM leasehold_paused_queues) || ':' ||
       (SELECT count(*) || '/' || coalesce(max(id), 0) || '/' || coalesce(sum(paused_at), 0) || '/' || coalesce(sum(next_slot), 0)
        FROM leasehold_schedules)
