//! Claiming on PostgreSQL: the one claim statement of a claim round (it
//! settles, claims with `SKIP LOCKED` and reports stale candidates), and the
//! takeovers of stale leases, one statement for all of them.

use sqlx::{PgPool, Row};

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Claims, boxed};
use crate::store::exchange::{ClaimRequest, ClaimRound, OwnerParams, TakenOver, Takeover};
use crate::store::{ClaimedJob, OnSuccess, rows};

impl Claims for PgPool {
    fn claim<'a>(&'a self, request: &'a ClaimRequest<'a>) -> BoxFuture<'a, (ClaimRound, Vec<i64>)> {
        let pool = self;
        boxed(async move {
            let ClaimRequest {
                queue,
                owner,
                lease_ms,
                n,
                look_for_stale,
                refused,
                watched: _,
                watched_stale: _,
                settle,
                settle_results,
                on_success,
                now: _,
            } = request;
            // A claim that does not look for stale leases names no refused ids.
            let refused: &[i64] = if *look_for_stale { refused } else { &[] };
            // One statement per shape, so that PostgreSQL caches one plan for
            // each: nothing to settle is the claim part alone (claim_only.sql).
            let keep = *on_success == OnSuccess::Keep;
            let text = match (settle.is_empty(), keep) {
                (true, _) => sql::CLAIM_ONLY.text,
                (false, true) => sql::CLAIM.text,
                (false, false) => sql::CLAIM_DELETING.text,
            };
            let query = sqlx::query(text)
                .bind(*queue)
                .bind(*n)
                .bind(owner.host)
                .bind(owner.pid)
                .bind(owner.nonce)
                .bind(owner.start_time)
                .bind(owner.boot_id)
                .bind(*lease_ms)
                .bind(*look_for_stale)
                .bind(refused);
            let query = if settle.is_empty() {
                query
            } else {
                let (ids, tokens, results) = by_id(settle, settle_results);
                let query = query.bind(ids).bind(tokens);
                if keep { query.bind(results) } else { query }
            };
            // `watched`, last in each statement: NULL, no gate on the queued jobs that carry
            // a cancelled attempt's lease. The server's one clock stamps that lease's end and
            // judges it due, as it judges a running lease stale (see the claim_page fragment).
            let query = query.bind(None::<Vec<String>>);
            let found = query.fetch_all(pool).await?;
            let mut round = ClaimRound::default();
            let mut done = Vec::new();
            let mut claimed: Vec<((i32, i64), ClaimedJob)> = Vec::with_capacity(found.len());
            for row in &found {
                let kind: &str = row.try_get("kind")?;
                match kind {
                    "claimed" => {
                        round.now = row.try_get("now")?;
                        let order = (row.try_get("priority")?, row.try_get("run_at")?);
                        claimed.push((order, rows::claimed(row, false)?));
                    }
                    "stale" => {
                        round.now = row.try_get("now")?;
                        round.stale.push(rows::stale(row)?);
                    }
                    _ => done.push(row.try_get("id")?),
                }
            }
            // RETURNING order is unspecified: hand the page out in the queue's order.
            claimed.sort_by_key(|((priority, run_at), job)| (*priority, *run_at, job.id));
            round.claimed = claimed.into_iter().map(|(_, job)| job).collect();
            Ok((round, done))
        })
    }

    fn take_over<'a>(
        &'a self,
        owner: &'a OwnerParams<'a>,
        lease_ms: i64,
        takeovers: &'a [Takeover<'a>],
        _now: i64,
    ) -> BoxFuture<'a, Vec<TakenOver>> {
        let pool = self;
        boxed(async move {
            fn c<'a>(t: &Takeover<'a>) -> &'a crate::store::exchange::StaleCandidate {
                t.candidate
            }
            let found = sqlx::query(sql::TAKE_OVER.text)
                .bind(takeovers.iter().map(|t| c(t).id).collect::<Vec<_>>())
                .bind(takeovers.iter().map(|t| c(t).token).collect::<Vec<_>>())
                .bind(
                    takeovers
                        .iter()
                        .map(|t| c(t).owner.nonce.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| c(t).heartbeat_at)
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| t.note.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| c(t).owner.host_id.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| i64::from(c(t).owner.pid))
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| c(t).owner.start_time.map(|s| s as i64))
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| c(t).owner.boot_id.as_deref())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    takeovers
                        .iter()
                        .map(|t| c(t).claimed_at)
                        .collect::<Vec<_>>(),
                )
                .bind(owner.host)
                .bind(owner.pid)
                .bind(owner.nonce)
                .bind(owner.start_time)
                .bind(owner.boot_id)
                .bind(lease_ms)
                .fetch_all(pool)
                .await?;
            found
                .iter()
                .map(|row| {
                    let kind: &str = row.try_get("kind")?;
                    if kind == "claimed" {
                        Ok(TakenOver::Claimed(rows::claimed(row, true)?))
                    } else {
                        Ok(TakenOver::DeadLettered(row.try_get("id")?))
                    }
                })
                .collect()
        })
    }
}

/// Fences as two arrays (ids, tokens) in ascending id order: the order in
/// which a batch locks its rows (see `fragments/settle_keep.sql`); with their
/// results, in the same order.
pub(super) fn by_id(pairs: &[(i64, i64)], results: &[Option<String>]) -> (Vec<i64>, Vec<i64>, Vec<Option<String>>) {
    debug_assert_eq!(pairs.len(), results.len(), "one result (or none) per fence");
    let mut sorted: Vec<((i64, i64), Option<String>)> =
        pairs.iter().copied().zip(results.iter().cloned()).collect();
    sorted.sort_unstable_by_key(|(pair, _)| *pair);
    let mut out = (Vec::with_capacity(sorted.len()), Vec::with_capacity(sorted.len()), Vec::with_capacity(sorted.len()));
    for ((id, token), result) in sorted {
        out.0.push(id);
        out.1.push(token);
        out.2.push(result);
    }
    out
}
