-- read_snapshot: begins a read-only transaction on one snapshot, for reads
-- of several statements that must agree (a job and its attempts, a tally,
-- the journal's watermark and its rows).
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY
