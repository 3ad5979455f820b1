-- migration_record: records one applied migration, stamped with the
-- statement's clock.
--
-- $1 = id: the migration's id (its set's id block + its number) (int8)
-- $2 = namespace: its set's namespace (text)
-- $3 = name: its name (text)
INSERT INTO leasehold_migrations (id, namespace, name, applied_at)
VALUES ($1, $2, $3, CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint))
