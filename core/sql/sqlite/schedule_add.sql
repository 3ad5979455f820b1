-- schedule_add: adds a schedule, unless one of that name exists.
--
-- ?1 = name: the schedule's name (text)
-- ?2 = queue: the queue its jobs go to (text)
-- ?3 = payload: its jobs' payload as JSON text (text)
-- ?4 = max_attempts: its jobs' attempt budget (integer)
-- ?5 = timeout_ms: its jobs' per-attempt timeout, ms, or NULL (integer)
-- ?6 = every_ms: the period, ms, or NULL for a cron schedule (integer)
-- ?7 = cron: the cron expression, or NULL (text)
-- ?8 = time_zone: the cron's time zone, or NULL (text)
-- ?9 = catch_up: the catch-up policy (text)
-- ?10 = overlap: the overlap policy (text)
-- ?11 = now: the caller's clock, ms: created_at and the first cursor (integer)
-- ?12 = next_slot: the first slot, ms (integer)
--
-- Returns the new schedule's id, or no row when the name is taken.
INSERT INTO leasehold_schedules
    (name, queue, payload, max_attempts, timeout_ms, every_ms, cron, time_zone,
     catch_up, overlap, created_at, last_slot, next_slot)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12)
ON CONFLICT (name) DO NOTHING
RETURNING id
