-- vacuum_jobs: vacuums the jobs table. SKIP_LOCKED: it neither waits for
-- nor queues behind another process's vacuum of it. INDEX_CLEANUP ON: the
-- dead entries at the head of the queued index are what it is for, and left
-- to choose (AUTO) the server skips the indexes when few heap pages hold
-- dead rows (a long backlog with a short dead head). TRUNCATE OFF: giving
-- the table's empty tail back takes an ACCESS EXCLUSIVE lock, which stops
-- every claim meanwhile, for pages the queue fills again.
VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON, TRUNCATE OFF) leasehold_jobs
