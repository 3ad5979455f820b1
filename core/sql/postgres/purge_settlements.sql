-- purge_settlements: purges the next range of the settlements journal in
-- its (xid, id) order (its one index): of the rows after a position, those
-- settled long enough ago.
--
-- $1 = after_xid: the range starts after this (xid, id); xid as text, '0' at first (text)
-- $2 = after_id: the id of that position (int8)
-- $3 = range_rows: the range's length in rows (int8)
-- $4 = older_than_ms: purge what settled this long before the statement's clock, ms (int8)
-- $5 = queue: only this queue, or NULL for every queue (text)
--
-- Returns one row: the range's last xid (text) and id (both NULL once past
-- the end), and how many rows it deleted (int8).
--
-- The DELETE names the range by its two ends, so it walks the index between
-- them: joined to `range` instead, the prepared (generic) plan does not know
-- the range is short and hashes it against a scan of the whole journal, for
-- every range. The rows between the ends are the range's: one statement,
-- one snapshot.
WITH range AS MATERIALIZED (
    SELECT xid, id FROM leasehold_settlements WHERE (xid, id) > ($1::text::xid8, $2)
    ORDER BY xid, id LIMIT $3),
last AS MATERIALIZED (SELECT xid, id FROM range ORDER BY xid DESC, id DESC LIMIT 1),
gone AS (
    DELETE FROM leasehold_settlements s
    WHERE (s.xid, s.id) > ($1::text::xid8, $2)
      AND (s.xid, s.id) <= ((SELECT xid FROM last), (SELECT id FROM last))
      AND s.at < CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) - $4
      AND ($5::text IS NULL OR s.queue = $5)
    RETURNING s.id)
SELECT (SELECT xid::text FROM last), (SELECT id FROM last), (SELECT count(*) FROM gone)
