-- probe: a read that opens the file (SQLite opens it lazily), to learn
-- whether it can be read.
--
-- Returns one row: how many schema objects the file holds.
SELECT count(*) FROM sqlite_master
