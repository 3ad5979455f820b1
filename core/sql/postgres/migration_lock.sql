-- migration_lock: takes the migration lock for the rest of the transaction
-- (released by its commit, or by the server if the connection dies, so a
-- crashed migrator never wedges the next one).
--
-- $1 = key: the advisory-lock key ('leasehold' in ASCII as an int8) (int8)
SELECT pg_advisory_xact_lock($1)
