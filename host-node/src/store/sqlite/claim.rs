//! Claiming on SQLite: the stale read and the atomic claim `UPDATE` of a
//! claim round, and the takeovers of stale leases (one `BEGIN IMMEDIATE`
//! transaction with their journal rows and attempt log).

use sqlx::{Row, SqlitePool};

use leasehold_core::queue::statements::sqlite as sql;

use super::immediate;
use super::settle::{Ended, journal};
use crate::store::backend::{BoxFuture, Claims, Settles, boxed};
use crate::store::exchange::{ClaimRequest, ClaimRound, OwnerParams, TakenOver, Takeover};
use crate::store::{ClaimedJob, StoreResult, rows};

impl Claims for SqlitePool {
    fn claim<'a>(&'a self, request: &'a ClaimRequest<'a>) -> BoxFuture<'a, (ClaimRound, Vec<i64>)> {
        let pool = self;
        boxed(async move {
            let &ClaimRequest {
                queue,
                ref owner,
                lease_ms,
                n,
                look_for_stale,
                refused,
                watched,
                watched_stale,
                settle,
                settle_results,
                on_success,
                now,
            } = request;
            // Commits are cheap in WAL mode: the completion goes first on its own.
            let done = if settle.is_empty() {
                Vec::new()
            } else {
                pool.complete(settle, settle_results, on_success, now).await?
            };
            // Two statements (one when this claim does not look for stale leases),
            // no transaction: the stale read only sizes the page and
            // names candidates (each takeover re-checks its snapshot), and the claim
            // is one atomic UPDATE.
            let stale = if look_for_stale {
                sqlx::query(sql::STALE.text)
                    .bind(queue)
                    .bind(now)
                    .bind(serde_json::to_string(refused).expect("ids serialize"))
                    .bind(n)
                    .bind(serde_json::to_string(watched_stale).expect("ids serialize"))
                    .fetch_all(pool)
                    .await?
                    .iter()
                    .map(rows::stale)
                    .collect::<StoreResult<Vec<_>>>()?
            } else {
                Vec::new()
            };
            let room = n - stale.len() as i64;
            let mut claimed = Vec::new();
            if room > 0 {
                let found = sqlx::query(sql::CLAIM.text)
                    .bind(owner.host)
                    .bind(owner.pid)
                    .bind(owner.nonce)
                    .bind(owner.start_time)
                    .bind(owner.boot_id)
                    .bind(now)
                    .bind(lease_ms)
                    .bind(queue)
                    .bind(room)
                    .bind(serde_json::to_string(watched).expect("texts serialize"))
                    .fetch_all(pool)
                    .await?;
                claimed = in_claim_order(&found)?;
            }
            // Every running lease, this claim's own included, and every
            // cancelled attempt's lease a queued job carries, for the
            // claimant's lease watch (a renewal landing between this read
            // and the stale read above only restarts a watch).
            let leases = if look_for_stale {
                let rows = sqlx::query(sql::RUNNING_LEASES.text).bind(queue).fetch_all(pool).await?;
                let mut leases = rows.iter().map(rows::running_lease).collect::<StoreResult<Vec<_>>>()?;
                // By id, the watch's own order: the rows come in the index's
                // (expiry) order, and sighting them so costs the watch an
                // insert in the middle of its sorted entries for each lease it
                // has not seen (a new worker's first look over 50 000 running
                // jobs took 0.7 s, 0.2 s by id, in a debug build).
                leases.sort_unstable_by_key(|lease| lease.id);
                Some(leases)
            } else {
                None
            };
            Ok((
                ClaimRound {
                    claimed,
                    stale,
                    leases,
                    now,
                },
                done,
            ))
        })
    }

    fn take_over<'a>(
        &'a self,
        owner: &'a OwnerParams<'a>,
        lease_ms: i64,
        takeovers: &'a [Takeover<'a>],
        now: i64,
    ) -> BoxFuture<'a, Vec<TakenOver>> {
        let pool = self;
        boxed(async move {
            let mut tx = immediate(pool).await?;
            let mut out = Vec::new();
            for t in takeovers {
                let c = t.candidate;
                let taken = sqlx::query(sql::TAKE_OVER.text)
                    .bind(c.id)
                    .bind(c.token)
                    .bind(&c.owner.nonce)
                    .bind(c.heartbeat_at)
                    .bind(now)
                    .bind(owner.host)
                    .bind(owner.pid)
                    .bind(owner.nonce)
                    .bind(owner.start_time)
                    .bind(owner.boot_id)
                    .bind(lease_ms)
                    .bind(i64::from(t.watched))
                    .fetch_optional(&mut *tx)
                    .await?;
                // The replaced owner's attempt, as the journal records it: lost,
                // or (on the last attempt) dead-lettered with the job.
                let replaced = |row: &sqlx::sqlite::SqliteRow, attempt: i64| -> StoreResult<Ended> {
                    let owner = &c.owner;
                    let (host, pid, nonce) = (owner.host_id.clone(), i64::from(owner.pid), owner.nonce.clone());
                    Ok((c.id, c.token, row.try_get("queue")?, attempt, Some(host), Some(pid), Some(nonce)))
                };
                let result = match taken {
                    Some(row) => {
                        let claimed = rows::claimed(&row, true)?;
                        let lost = replaced(&row, i64::from(claimed.attempt) - 1)?;
                        journal(&mut tx, &[lost], "lost", Some(&t.note), None, now).await?;
                        Some(TakenOver::Claimed(claimed))
                    }
                    None => {
                        let note = format!("lease lost on the final attempt: {}", t.note);
                        let buried = sqlx::query(sql::BURY.text)
                            .bind(c.id)
                            .bind(c.token)
                            .bind(&c.owner.nonce)
                            .bind(c.heartbeat_at)
                            .bind(now)
                            .bind(&note)
                            .bind(i64::from(t.watched))
                            .fetch_optional(&mut *tx)
                            .await?;
                        match buried {
                            Some(row) => {
                                let dead = replaced(&row, row.try_get("attempts")?)?;
                                journal(&mut tx, &[dead], "dead", Some(&note), None, now).await?;
                                Some(TakenOver::DeadLettered(c.id))
                            }
                            None => None,
                        }
                    }
                };
                let Some(result) = result else { continue };
                sqlx::query(sql::ATTEMPT_LOST.text)
                    .bind(c.id)
                    .bind(c.token)
                    .bind(&c.owner.host_id)
                    .bind(i64::from(c.owner.pid))
                    .bind(&c.owner.nonce)
                    .bind(c.owner.start_time.map(|t| t as i64))
                    .bind(&c.owner.boot_id)
                    .bind(c.claimed_at)
                    .bind(now)
                    .bind(&t.note)
                    .execute(&mut *tx)
                    .await?;
                out.push(result);
            }
            tx.commit().await?;
            Ok(out)
        })
    }
}

/// Claimed rows in the queue's order (RETURNING order is unspecified).
fn in_claim_order(found: &[sqlx::sqlite::SqliteRow]) -> StoreResult<Vec<ClaimedJob>> {
    let mut keyed = found
        .iter()
        .map(|r| {
            let priority: i32 = r.try_get("priority")?;
            let run_at: i64 = r.try_get("run_at")?;
            Ok(((priority, run_at), rows::claimed(r, false)?))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    keyed.sort_by_key(|((priority, run_at), job)| (*priority, *run_at, job.id));
    Ok(keyed.into_iter().map(|(_, job)| job).collect())
}
