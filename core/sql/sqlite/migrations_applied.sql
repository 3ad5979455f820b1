-- migrations_applied: the migrations applied so far.
--
-- Returns one row per migration: id, namespace, name.
SELECT id, namespace, name FROM leasehold_migrations
