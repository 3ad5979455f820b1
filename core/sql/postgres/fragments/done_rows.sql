-- fragment done_rows: a 'done' row (id) per completion of `done`, in the
-- columns of claim.sql's rows; a claim that completes jobs puts these first,
-- so the completion runs before `picked` locks anything.
SELECT 'done' AS kind, id, NULL::bigint AS token, NULL::text AS payload,
    NULL::int4 AS attempts, NULL::int4 AS max_attempts, NULL::bigint AS timeout_ms,
    NULL::bigint AS now, NULL::int4 AS priority, NULL::bigint AS run_at,
    NULL::text AS owner_host, NULL::bigint AS owner_pid, NULL::text AS owner_nonce,
    NULL::bigint AS owner_start_time, NULL::text AS owner_boot_id,
    NULL::bigint AS claimed_at, NULL::bigint AS heartbeat_at, NULL::bigint AS lease_ms
FROM done
