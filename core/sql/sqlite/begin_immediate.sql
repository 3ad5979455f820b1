-- begin_immediate: begins a transaction that takes the write lock up front:
-- two processes never interleave inside one, and a crash mid-way commits
-- nothing.
BEGIN IMMEDIATE
