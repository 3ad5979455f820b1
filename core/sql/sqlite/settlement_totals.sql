-- settlement_totals: the settlements journal's rows counted by queue and outcome. One scan of
-- the journal: its cost grows with the rows kept.
--
-- Returns per queue and outcome, in name order: queue, outcome, n.
SELECT queue, outcome, count(*) AS n FROM leasehold_settlements
GROUP BY queue, outcome ORDER BY queue, outcome
