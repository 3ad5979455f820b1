//! What the two SQL backends exchange with the shared [`Store`](super::Store)
//! logic: claimant bind values, stale candidates, takeovers, fence rows, and
//! the one place a lost fence is explained.

use std::collections::HashMap;

use leasehold_core::lease::{FenceOutcome, OwnerId};

use super::{ClaimedJob, Fence, JobState, StoreError, StoreResult};

/// A claimant's identity as bound into SQL.
#[derive(Clone, Debug)]
pub(crate) struct OwnerParams<'a> {
    pub host: &'a str,
    pub pid: i64,
    pub nonce: &'a str,
    pub start_time: Option<i64>,
    pub boot_id: Option<&'a str>,
}

impl<'a> OwnerParams<'a> {
    pub(crate) fn new(owner: &'a OwnerId) -> StoreResult<Self> {
        let start_time = owner
            .start_time
            .map(|t| {
                i64::try_from(t).map_err(|_| StoreError::InvalidOption {
                    option: "owner.start_time",
                    reason: format!("{t} does not fit in i64"),
                })
            })
            .transpose()?;
        if owner.nonce.is_empty() {
            return Err(StoreError::InvalidOption {
                option: "owner.nonce",
                reason: "must not be empty: it tells incarnations apart".to_owned(),
            });
        }
        Ok(OwnerParams {
            host: &owner.host_id,
            pid: i64::from(owner.pid),
            nonce: &owner.nonce,
            start_time,
            boot_id: owner.boot_id.as_deref(),
        })
    }
}

/// One claim statement's inputs, as bound into SQL.
#[derive(Debug)]
pub(crate) struct ClaimRequest<'a> {
    pub queue: &'a str,
    pub owner: OwnerParams<'a>,
    pub lease_ms: i64,
    /// Page size.
    pub n: i64,
    /// Whether this claim looks for stale leases too (see
    /// [`super::StoreConfig::reclaim_every`]); if not, it takes due queued
    /// jobs only and answers no stale candidates.
    pub look_for_stale: bool,
    /// Stale jobs not to offer again yet (refused by the liveness check).
    pub refused: &'a [i64],
    /// SQLite: the queued jobs carrying a cancelled attempt's lease that
    /// this claimant has watched unrenewed for its window, as `id:token`
    /// (see store/watch.rs); any other such job is not claimed. PostgreSQL
    /// ignores it (one clock: the due time suffices).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub watched: &'a [String],
    /// SQLite: the running jobs whose leases this claimant's watch has seen
    /// unrenewed for longer than their window, named as stale candidates
    /// whatever the wall clock says (an owner's clock reading ahead of the
    /// claimant's would keep them from it for that much longer). PostgreSQL
    /// ignores it.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub watched_stale: &'a [i64],
    /// Fences to complete in the same statement (`complete_and_claim`).
    pub settle: &'a [(i64, i64)],
    /// The results of `settle`, as JSON text, in its order.
    pub settle_results: &'a [Option<String>],
    /// What completing `settle` does with the jobs.
    pub on_success: super::OnSuccess,
    /// The caller's clock (SQLite stamps with it).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub now: i64,
}

/// A running job whose lease the claim statement found stale, as read: the
/// exact snapshot a takeover compares and swaps on.
#[derive(Clone, Debug)]
pub(crate) struct StaleCandidate {
    pub id: i64,
    pub token: i64,
    pub owner: OwnerId,
    pub claimed_at: i64,
    pub heartbeat_at: Option<i64>,
    pub lease_ms: i64,
}

/// One lease as a look for stale leases read it on SQLite: which renewal
/// (`heartbeat_at`) of which claim (`token`) of job `id`, under which stale
/// window (`lease_ms`); `cancelled` for the lease of an attempt cancelled
/// while it ran, which a queued job carries until its next claim.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunningLease {
    pub id: i64,
    pub token: i64,
    pub heartbeat_at: Option<i64>,
    pub lease_ms: Option<i64>,
    pub cancelled: bool,
}

/// What one claim statement found: the queued jobs it claimed, and the stale
/// running jobs it saw (not yet taken), read at `now` (the statement's clock);
/// on SQLite, when it looked for stale leases, every running lease of the
/// queue (`leases`, for the claimant's lease watch: see store/claim.rs).
#[derive(Debug, Default)]
pub(crate) struct ClaimRound {
    pub claimed: Vec<ClaimedJob>,
    pub stale: Vec<StaleCandidate>,
    pub leases: Option<Vec<RunningLease>>,
    pub now: i64,
}

/// One takeover to attempt: the snapshot, the note recorded on the
/// replaced owner's attempt (who took it, and how), and whether the
/// claimant's lease watch let the lease go (`watched`, SQLite: the swap then
/// does not judge it by the wall clock again).
#[derive(Debug)]
pub(crate) struct Takeover<'a> {
    pub candidate: &'a StaleCandidate,
    pub note: String,
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub watched: bool,
}

/// The result of one takeover whose compare-and-swap matched.
#[derive(Debug)]
pub(crate) enum TakenOver {
    /// Running under the claimant now.
    Claimed(ClaimedJob),
    /// That lease was the job's last attempt: dead-lettered.
    DeadLettered(i64),
}

/// A job's fence columns, read to explain a fenced write that did not land.
#[derive(Clone, Debug)]
pub(crate) struct FenceRow {
    pub id: i64,
    pub token: i64,
    pub state: String,
    pub owner_nonce: Option<String>,
}

/// Maps the rows an insert returned (`id`, `idempotency_key`) back to the
/// input jobs, in input order.
///
/// Jobs without a key get the keyless ids in ascending order: ids are
/// assigned in insert order and both backends insert in input order. Jobs
/// whose key conflicted (with an older job, or an earlier job of the same
/// batch) are looked up in `existing` (key → id), read after the insert;
/// `None` for one whose conflicting job was deleted in between (a
/// completion under `OnSuccess::Delete`, or a purge), whose key is free
/// again: the caller inserts it again.
///
/// # Errors
/// [`StoreError::CorruptRow`] when a job without a key got no id: it was
/// inserted, and inserting it again would queue it twice.
pub(crate) fn assign_ids(
    jobs: &[super::validate::NewJob],
    returned: Vec<(i64, Option<String>)>,
    existing: &HashMap<String, i64>,
) -> StoreResult<Vec<Option<super::JobId>>> {
    let mut keyless: Vec<i64> = Vec::with_capacity(returned.len());
    let mut keyed: HashMap<String, i64> = HashMap::new();
    for (id, key) in returned {
        match key {
            Some(k) => {
                keyed.insert(k, id);
            }
            None => keyless.push(id),
        }
    }
    keyless.sort_unstable();
    let mut keyless = keyless.into_iter();
    jobs.iter()
        .map(|job| match &job.idempotency_key {
            None => keyless.next().map(|id| Some(super::JobId(id))).ok_or_else(|| StoreError::CorruptRow {
                table: "leasehold_jobs",
                detail: "an enqueued job's id was not returned".to_owned(),
            }),
            Some(k) => Ok(keyed.get(k).or_else(|| existing.get(k)).copied().map(super::JobId)),
        })
        .collect()
}

/// The keys of `jobs` whose rows the insert did not return (conflicts).
pub(crate) fn conflicted_keys(
    jobs: &[super::validate::NewJob],
    returned: &[(i64, Option<String>)],
) -> Vec<String> {
    let inserted: std::collections::HashSet<&str> =
        returned.iter().filter_map(|(_, k)| k.as_deref()).collect();
    let mut keys: Vec<String> = jobs
        .iter()
        .filter_map(|j| j.idempotency_key.as_deref())
        .filter(|k| !inserted.contains(k))
        .map(str::to_owned)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Answers each fence: `Updated` when its id is in `updated` (a fence listed
/// twice counts as landed once), otherwise from its row in `rows`, read
/// after the statement:
///
/// - no row → `LostMissing`;
/// - another token → `LostToNewerToken` (tokens only grow, so another
///   claim took the job);
/// - same token, not running → `LostNotRunning` (settled, or failed back to
///   the queue);
/// - same token, running, but `expected_nonce` given and not the recorded
///   owner's → `LostToNewerToken` (the lease is not the caller's);
/// - same token, running, right owner → `Updated`: the fence still holds;
///   this is the repeat of a fence the same statement already renewed.
///
/// The statements answer the ids that landed, not the tokens. A job listed
/// with two tokens (one process holding a stale attempt of a job it has
/// since reclaimed) is therefore read back too ([`unlanded`]), and its
/// landing goes to the fence whose token the row holds: the stale token is
/// answered `LostToNewerToken`, never `Updated`.
pub(crate) fn fence_outcomes(
    fences: &[Fence],
    updated: &[i64],
    rows: &[FenceRow],
    expected_nonce: Option<&str>,
) -> StoreResult<Vec<FenceOutcome>> {
    let mut landed = landed_counts(updated);
    let mixed = mixed_tokens(fences);
    let rows: HashMap<i64, &FenceRow> = rows.iter().map(|r| (r.id, r)).collect();
    fences
        .iter()
        .map(|fence| {
            let row = rows.get(&fence.job.0);
            // For a job listed with several tokens only the row's token can
            // have landed; if the row is gone or changed again, none is
            // credited (a landed write answered lost is safe, not the reverse).
            let may_have_landed =
                !mixed.contains(&fence.job.0) || row.is_some_and(|r| u64::try_from(r.token).ok() == Some(fence.token));
            if may_have_landed
                && let Some(n) = landed.get_mut(&fence.job.0)
                && *n > 0
            {
                *n -= 1;
                return Ok(FenceOutcome::Updated);
            }
            let Some(row) = row else {
                return Ok(FenceOutcome::LostMissing);
            };
            if u64::try_from(row.token).ok() != Some(fence.token) {
                return Ok(FenceOutcome::LostToNewerToken);
            }
            match JobState::parse(&row.state) {
                Some(JobState::Running) => match expected_nonce {
                    Some(nonce) if row.owner_nonce.as_deref() != Some(nonce) => {
                        Ok(FenceOutcome::LostToNewerToken)
                    }
                    _ => Ok(FenceOutcome::Updated),
                },
                Some(_) => Ok(FenceOutcome::LostNotRunning),
                None => Err(StoreError::CorruptRow {
                    table: "leasehold_jobs",
                    detail: format!("job {} has unknown state {:?}", row.id, row.state),
                }),
            }
        })
        .collect()
}

/// How many times each id landed.
fn landed_counts(updated: &[i64]) -> HashMap<i64, usize> {
    let mut landed: HashMap<i64, usize> = HashMap::with_capacity(updated.len());
    for id in updated {
        *landed.entry(*id).or_default() += 1;
    }
    landed
}

/// The ids listed with more than one token.
fn mixed_tokens(fences: &[Fence]) -> std::collections::HashSet<i64> {
    // The common single write: nothing to compare, nothing allocated.
    if fences.len() < 2 {
        return std::collections::HashSet::new();
    }
    let mut first: HashMap<i64, u64> = HashMap::with_capacity(fences.len());
    let mut mixed = std::collections::HashSet::new();
    for f in fences {
        if *first.entry(f.job.0).or_insert(f.token) != f.token {
            mixed.insert(f.job.0);
        }
    }
    mixed
}

/// The ids whose rows the answers need: the fences that did not land, and
/// every job listed with more than one token (see [`fence_outcomes`]).
pub(crate) fn unlanded(fences: &[Fence], updated: &[i64]) -> Vec<i64> {
    let mut landed = landed_counts(updated);
    let mut out: Vec<i64> = mixed_tokens(fences).into_iter().collect();
    for f in fences {
        match landed.get_mut(&f.job.0) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(f.job.0),
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::JobId;

    fn fence(job: i64, token: u64) -> Fence {
        Fence {
            job: JobId(job),
            token,
        }
    }

    fn row(id: i64, token: i64, state: &str) -> FenceRow {
        FenceRow {
            id,
            token,
            state: state.to_owned(),
            owner_nonce: Some("a".to_owned()),
        }
    }

    #[test]
    fn landed_fences_are_updated_and_the_rest_say_why() {
        let fences = [fence(1, 1), fence(2, 1), fence(3, 2), fence(4, 1)];
        let rows = [row(2, 2, "running"), row(3, 2, "succeeded")];
        let out = fence_outcomes(&fences, &[1], &rows, None).unwrap();
        assert_eq!(
            out,
            [
                FenceOutcome::Updated,
                FenceOutcome::LostToNewerToken,
                FenceOutcome::LostNotRunning,
                FenceOutcome::LostMissing
            ]
        );
    }

    #[test]
    fn a_completion_listed_twice_lands_once() {
        let fences = [fence(1, 1), fence(1, 1)];
        let rows = [row(1, 1, "succeeded")];
        let out = fence_outcomes(&fences, &[1], &rows, None).unwrap();
        assert_eq!(out, [FenceOutcome::Updated, FenceOutcome::LostNotRunning]);
        assert_eq!(unlanded(&fences, &[1]), [1]);
    }

    #[test]
    fn a_stale_token_beside_the_current_one_is_never_told_it_landed() {
        // Job 1 reclaimed by the same process: token 1 is stale, token 2 holds.
        let fences = [fence(1, 1), fence(1, 2), fence(1, 2)];
        assert_eq!(unlanded(&fences, &[1]), [1], "its row is read back");
        let completed = fence_outcomes(&fences, &[1], &[row(1, 2, "succeeded")], None).unwrap();
        assert_eq!(
            completed,
            [FenceOutcome::LostToNewerToken, FenceOutcome::Updated, FenceOutcome::LostNotRunning]
        );
        let renewed = fence_outcomes(&fences[..2], &[1], &[row(1, 2, "running")], None).unwrap();
        assert_eq!(renewed, [FenceOutcome::LostToNewerToken, FenceOutcome::Updated]);
        // Changed again since (reclaimed by someone else): nobody is credited.
        let moved = fence_outcomes(&fences[..2], &[1], &[row(1, 3, "running")], None).unwrap();
        assert_eq!(moved, [FenceOutcome::LostToNewerToken, FenceOutcome::LostToNewerToken]);
    }

    #[test]
    fn a_renewal_listed_twice_is_updated_twice() {
        let fences = [fence(1, 1), fence(1, 1)];
        let out = fence_outcomes(&fences, &[1], &[row(1, 1, "running")], None).unwrap();
        assert_eq!(out, [FenceOutcome::Updated, FenceOutcome::Updated]);
    }

    #[test]
    fn same_token_under_another_owner_is_lost() {
        let out = fence_outcomes(&[fence(1, 1)], &[], &[row(1, 1, "running")], Some("b")).unwrap();
        assert_eq!(out, [FenceOutcome::LostToNewerToken]);
    }

    fn new_job(key: Option<&str>) -> crate::store::validate::NewJob {
        let options = crate::store::EnqueueOptions {
            idempotency_key: key.map(str::to_owned),
            ..Default::default()
        };
        crate::store::validate::NewJob::new(&serde_json::json!(1), &options).unwrap()
    }

    #[test]
    fn a_keyed_job_whose_conflicting_job_vanished_gets_no_id_to_insert_again() {
        let jobs = [new_job(None), new_job(Some("a")), new_job(Some("b")), new_job(None)];
        let returned = vec![(7, None), (5, None), (6, Some("a".to_owned()))];
        let ids = assign_ids(&jobs, returned, &HashMap::new()).unwrap();
        assert_eq!(ids, [Some(JobId(5)), Some(JobId(6)), None, Some(JobId(7))]);
        let existing = HashMap::from([("b".to_owned(), 3)]);
        let ids = assign_ids(&jobs, vec![(5, None), (6, Some("a".to_owned())), (7, None)], &existing).unwrap();
        assert_eq!(ids[2], Some(JobId(3)));
    }

    #[test]
    fn a_keyless_job_without_an_id_is_a_corrupt_row_not_a_retry() {
        let err = assign_ids(&[new_job(None)], Vec::new(), &HashMap::new()).unwrap_err();
        assert!(matches!(err, StoreError::CorruptRow { .. }), "{err}");
    }

    #[test]
    fn unknown_state_is_a_corrupt_row() {
        let err = fence_outcomes(&[fence(1, 1)], &[], &[row(1, 1, "weird")], None).unwrap_err();
        assert!(err.to_string().contains("weird"));
    }
}
