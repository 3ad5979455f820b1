-- migrations_table: creates the table of applied migrations if missing.
CREATE TABLE IF NOT EXISTS leasehold_migrations (
    id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, applied_at INTEGER NOT NULL)
