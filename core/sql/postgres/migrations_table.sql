-- migrations_table: creates the table of applied migrations if missing.
CREATE TABLE IF NOT EXISTS leasehold_migrations (
    id bigint PRIMARY KEY, namespace text NOT NULL, name text NOT NULL,
    applied_at bigint NOT NULL)
