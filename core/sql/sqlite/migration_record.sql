-- migration_record: records one applied migration, stamped with the host's
-- clock as SQLite reads it.
--
-- ?1 = id: the migration's id (its set's id block + its number) (integer)
-- ?2 = namespace: its set's namespace (text)
-- ?3 = name: its name (text)
INSERT INTO leasehold_migrations (id, namespace, name, applied_at)
VALUES (?1, ?2, ?3, CAST(unixepoch('subsec') * 1000 AS INTEGER))
