-- renew: renews the leases of running jobs, each under its fence: the
-- heartbeat becomes now and the lease runs its stale window again.
--
-- ?1 = fences: a JSON array of [id, token] (text)
-- ?2 = now: the caller's clock, ms (integer)
-- ?3 = owner_nonce: also require this owner (a reconfirm), or NULL (text)
--
-- Returns one row per renewal whose fence held: id.
UPDATE leasehold_jobs AS j SET heartbeat_at = ?2, expires_at = ?2 + j.lease_ms
FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS token
      FROM json_each(?1)) AS f
WHERE j.id = f.id AND j.token = f.token AND j.state = 'running'
  AND (?3 IS NULL OR j.owner_nonce = ?3)
RETURNING id
