//! Steering a queue by hand: cancel, retry, pause and resume.
//!
//! A cancel is a fence bump. The job becomes `cancelled` and its fencing
//! token moves in the same statement, so the owner of a running job finds
//! its lease lost at its next renewal (on PostgreSQL it is also told at once
//! by a NOTIFY) and ends the work as on any lost lease, and every later
//! write of that attempt — a renewal, a completion or a failure with its
//! result — is refused by the fence, so nothing of it is recorded (a
//! result is written only by the settle statement itself). The attempt is
//! logged as `lease-lost` with who cancelled it and why; every cancelled job
//! (queued or running) is journaled as `cancelled` in the same transaction.
//! A cancelled job is never retried unless asked.
//!
//! A retry queues a dead-lettered or cancelled job again, due now, with a
//! fresh attempt budget; its attempt log is kept (tokens keep growing, so
//! the earlier attempts keep their keys). A job cancelled while it ran is
//! due once that attempt's lease would have gone stale (the cancel keeps its
//! `expires_at`), if that is later: its owner may not have heard the cancel
//! (cut off from the database, or between two renewals on SQLite) and stops
//! its work by then, as for a lost lease, so no other worker starts the job
//! beside it. That lease stays on the queued job until a claim replaces it,
//! so a cancel and a retry while it waits keep the due time. On SQLite, where
//! that due time is on the clock of whoever retried, a claimant also waits
//! until it has seen that lease unrenewed for its window itself (see
//! [`Store::claim_page`]).
//!
//! A pause is a row of `leasehold_paused_queues`: claims skip the queue's
//! queued jobs (a worker stops claiming from it at its next poll), running
//! jobs go on and settle, enqueues still land.
//!
//! Cancel and retry pick their jobs with one selector: the ids given (NULL:
//! any), the queue (NULL: any) and the states the action applies to.
//! Listing ids changes all of them or none: the statements run in one
//! transaction, rolled back when fewer jobs changed than were named, and the
//! first id at fault is named.

use std::future::Future;
use std::time::Duration;

use leasehold_core::Millis;

use super::dashboard::ShownState;
use super::{Fence, JobId, JobState, Store, StoreError, StoreResult, Wakeups, validate};
use crate::runner::{AbortSignal, Clock};

/// The longest `by` and `reason` a cancel records, in bytes.
pub const MAX_CANCEL_TEXT: usize = leasehold_core::queue::rules::MAX_CANCEL_TEXT_LEN;

const CANCEL_FROM: &[&str] = &["queued", "running"];
const CANCEL_EXPECTED: &str = "only queued (or scheduled) and running jobs can be cancelled";
const RETRY_FROM: &[&str] = &["dead", "cancelled"];
const RETRY_EXPECTED: &str = "only dead-lettered and cancelled jobs can be retried";

/// A paused queue ([`Store::paused_queues`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PausedQueue {
    /// The queue.
    pub queue: String,
    /// Since when, ms since the Unix epoch (the database's clock on PostgreSQL).
    pub paused_at: Millis,
    /// Who paused it, as it named itself.
    pub paused_by: String,
}

/// A job queued again by [`Store::retry`] or [`Store::retry_dead`], with when
/// it may be claimed, as the retry statement set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retried {
    /// The job.
    pub id: JobId,
    /// When the retry was stamped, ms since the Unix epoch: the `now` given
    /// on SQLite, the server's clock on PostgreSQL.
    pub at: Millis,
    /// When the job is due, ms since the Unix epoch on the same clock as
    /// `at`: `at`, or for a job cancelled while it ran, the end of that
    /// attempt's lease if that is later.
    pub due_at: Millis,
    /// On SQLite, for a job that carries the lease of an attempt cancelled
    /// while it ran: that lease's window, for which a claimant must itself
    /// have seen the lease unrenewed before it claims the job, however long
    /// ago the lease ended: up to one window after the claimant first looks
    /// at it (see [`Store::claim_page`]). `None` on PostgreSQL, which judges
    /// every lease on its one clock, and for any other job.
    pub watch: Option<Duration>,
}

impl Retried {
    /// How long after the retry the job is due (`due_at - at`; zero when it
    /// is due at once).
    pub fn due_in(&self) -> Duration {
        Duration::from_millis(self.due_at.since(self.at))
    }
}

/// One job a steering statement changed: its id and queue, and for a retry
/// when it is due ([`Due`]).
pub(crate) struct Steered {
    pub(crate) id: i64,
    pub(crate) queue: String,
    pub(crate) due: Option<Due>,
}

/// When a retried job is due, as the retry statement answers it: `run_at`
/// and the statement's `now` (ms, on the clock that stamped it), and the
/// window a SQLite claimant watches its cancelled attempt's lease for.
pub(crate) struct Due {
    pub(crate) run_at: i64,
    pub(crate) now: i64,
    pub(crate) watch_ms: Option<i64>,
}

/// What a steering statement does to the jobs it selects.
#[derive(Clone, Copy)]
pub(crate) enum Action<'a> {
    Cancel { by: &'a str, reason: Option<&'a str> },
    Retry,
}

/// Which jobs: the ids given (all must change, or none does), or every job
/// of a queue (or of every queue) in the action's states.
pub(crate) struct Selection<'a> {
    pub(crate) ids: Option<Vec<i64>>,
    pub(crate) queue: Option<&'a str>,
    pub(crate) states: &'a [&'a str],
    expected: &'static str,
}

impl Store {
    /// Cancels the jobs `ids` (each queued, scheduled or running), recording
    /// `by` (who: 1 to 4096 bytes) and `reason` (why, at most 4096 bytes) at
    /// `now` (SQLite; PostgreSQL stamps its own clock). A running job's token
    /// moves: its owner's renewals and settles (with their results) answer
    /// lost from now on. Answers the ids, ascending.
    ///
    /// # Errors
    /// [`StoreError::UnknownJob`] for an id with no job;
    /// [`StoreError::WrongState`] for a job already finished (succeeded,
    /// dead, cancelled); in both cases no job was changed.
    /// [`StoreError::InvalidOption`] for an empty `by`, a text too long, or
    /// one holding the NUL character (U+0000).
    pub async fn cancel(&self, ids: &[JobId], reason: Option<&str>, by: &str, now: Millis) -> StoreResult<Vec<JobId>> {
        check_cancel_text(by, reason)?;
        let selection = Selection::ids(ids, CANCEL_FROM, CANCEL_EXPECTED);
        Ok(ids_of(self.steer(Action::Cancel { by, reason }, selection, now).await?))
    }

    /// Cancels every job of `queue` in `state` (queued — which includes the
    /// scheduled ones — or running), as [`Store::cancel`] does each. Answers
    /// the ids cancelled, ascending (none: nothing was in that state).
    ///
    /// # Errors
    /// [`StoreError::UnknownQueue`] for a queue with no job or schedule;
    /// [`StoreError::InvalidOption`] (`state`) for a finished state, and as
    /// [`Store::cancel`] for `by` and `reason`.
    pub async fn cancel_queue(
        &self,
        queue: &str,
        state: JobState,
        reason: Option<&str>,
        by: &str,
        now: Millis,
    ) -> StoreResult<Vec<JobId>> {
        check_cancel_text(by, reason)?;
        if !matches!(state, JobState::Queued | JobState::Running) {
            return Err(StoreError::InvalidOption {
                option: "state",
                reason: format!("{} jobs are finished: {CANCEL_EXPECTED}", state.as_str()),
            });
        }
        self.known_queue(queue).await?;
        let selection = Selection {
            ids: None,
            queue: Some(queue),
            states: &[state.as_str()],
            expected: CANCEL_EXPECTED,
        };
        Ok(ids_of(self.steer(Action::Cancel { by, reason }, selection, now).await?))
    }

    /// Queues the jobs `ids` (each dead-lettered or cancelled) again, due
    /// `now` (PostgreSQL: its own clock), or, cancelled while it ran, once
    /// that attempt's lease would have gone stale if that is later (on
    /// SQLite, and once a claimant has watched that lease for its window:
    /// see the module docs), with a fresh attempt budget; their attempt logs
    /// are kept. Wakes the queues' workers. Answers each job queued again,
    /// by id, with when it is due ([`Retried`]).
    ///
    /// # Errors
    /// [`StoreError::UnknownJob`], [`StoreError::WrongState`] (queued,
    /// running or succeeded): no job was changed.
    pub async fn retry(&self, ids: &[JobId], now: Millis) -> StoreResult<Vec<Retried>> {
        let changed = self.steer(Action::Retry, Selection::ids(ids, RETRY_FROM, RETRY_EXPECTED), now).await?;
        retried(changed)
    }

    /// Queues every dead-lettered job of `queue` (`None`: of every queue)
    /// again, as [`Store::retry`] does. Answers them by id (none: no dead
    /// job), as [`Store::retry`] does.
    ///
    /// # Errors
    /// [`StoreError::UnknownQueue`] for a queue with no job or schedule.
    pub async fn retry_dead(&self, queue: Option<&str>, now: Millis) -> StoreResult<Vec<Retried>> {
        if let Some(queue) = queue {
            self.known_queue(queue).await?;
        }
        let selection = Selection {
            ids: None,
            queue,
            states: &["dead"],
            expected: RETRY_EXPECTED,
        };
        retried(self.steer(Action::Retry, selection, now).await?)
    }

    /// Pauses `queue`: claims skip its queued jobs until
    /// [`Store::resume_queue`]; running jobs go on. `by` says who (1 to 4096
    /// bytes), `now` when (SQLite; PostgreSQL stamps its own clock). Answers
    /// `false` when it was paused already (left as it was).
    ///
    /// # Errors
    /// [`StoreError::UnknownQueue`] for a queue with no job or schedule.
    pub async fn pause_queue(&self, queue: &str, by: &str, now: Millis) -> StoreResult<bool> {
        check_cancel_text(by, None)?;
        self.known_queue(queue).await?;
        let now_ms = validate::millis("now", now)?;
        let offered = [("queue", queue.into()), ("now", now_ms.into()), ("by", by.into())];
        let added = self.run("pause_queue", &offered).await?;
        Ok(added == 1)
    }

    /// Resumes a paused `queue` (even one whose jobs were all purged since):
    /// its queued jobs are claimed again (idle workers are woken). Answers
    /// `false` when it was not paused (left as it was), as
    /// [`Store::pause_queue`] answers for a queue paused already: a repeated
    /// steer is no mistake.
    ///
    /// # Errors
    /// [`StoreError::UnknownQueue`] for a queue neither paused nor with a job
    /// or schedule.
    pub async fn resume_queue(&self, queue: &str) -> StoreResult<bool> {
        validate::queue_name(queue)?;
        let removed = self.run("resume_queue", &[("queue", queue.into())]).await?;
        if removed == 0 {
            // A paused queue is resumed even once its jobs are all gone; a
            // name that is neither paused nor known is a mistake, said so.
            self.known_queue(queue).await?;
            return Ok(false);
        }
        self.inner.wakers.wake(queue);
        Ok(true)
    }

    /// The paused queues, by name.
    pub async fn paused_queues(&self) -> StoreResult<Vec<PausedQueue>> {
        self.rows("paused_queues", &[], |row| {
            let paused_at = Millis(validate::unsigned("leasehold_paused_queues", "paused_at", row.int("paused_at")?)?);
            Ok(PausedQueue { queue: row.text("queue")?, paused_at, paused_by: row.text("paused_by")? })
        })
        .await
    }

    /// [`StoreError::UnknownQueue`] unless `queue` has a job or a schedule.
    async fn known_queue(&self, queue: &str) -> StoreResult<()> {
        validate::queue_name(queue)?;
        let known = self.rows("known_queue", &[("queue", queue.into())], |row| row.bool_at(0)).await?;
        let known = known.first().copied().unwrap_or(false);
        if known { Ok(()) } else { Err(StoreError::UnknownQueue(queue.to_owned())) }
    }

    /// Runs `action` on the selection in one transaction: rolled back, with
    /// the first id at fault named, when listed ids did not all change.
    /// Answers the jobs changed, by id.
    async fn steer(&self, action: Action<'_>, selection: Selection<'_>, now: Millis) -> StoreResult<Vec<Steered>> {
        let now_ms = validate::millis("now", now)?;
        if selection.ids.as_ref().is_some_and(Vec::is_empty) {
            return Ok(Vec::new());
        }
        let changed = self.backend().steer(action, &selection, now_ms).await?;
        let Some(mut changed) = changed else {
            return Err(self.refusal(&selection, now).await);
        };
        if matches!(action, Action::Retry) {
            let mut queues: Vec<&str> = changed.iter().map(|c| c.queue.as_str()).collect();
            queues.sort_unstable();
            queues.dedup();
            for queue in queues {
                self.inner.wakers.wake(queue);
            }
        }
        changed.sort_unstable_by_key(|c| c.id);
        Ok(changed)
    }

    /// Why listed ids did not all change: the first unknown id, else the
    /// first in a state the action does not apply to, named as it shows at
    /// `now` (a queued job not yet due is `scheduled`, one that failed
    /// before `retrying`), as `leasehold jobs` and the dashboard show it.
    async fn refusal(&self, selection: &Selection<'_>, now: Millis) -> StoreError {
        let ids = selection.ids.as_deref().unwrap_or_default();
        let found = self.rows("job_states", &[("ids", ids.into())], |row| Ok((row.int("id")?, row.text("state")?))).await;
        let found = match found {
            Ok(found) => found,
            Err(e) => return e,
        };
        let state_of = |id: i64| found.iter().find(|(f, _)| *f == id).map(|(_, s)| s.as_str());
        if let Some(&id) = ids.iter().find(|&&id| state_of(id).is_none()) {
            return StoreError::UnknownJob(JobId(id));
        }
        for &id in ids {
            let state = state_of(id).and_then(JobState::parse);
            match state {
                Some(s) if selection.states.contains(&s.as_str()) => {}
                Some(s) => {
                    let state = match self.job(JobId(id)).await {
                        Ok(job) => ShownState::of(&job, now).as_str(),
                        // Gone meanwhile: the state it was in.
                        Err(_) => s.as_str(),
                    };
                    return StoreError::WrongState { job: JobId(id), state, expected: selection.expected };
                }
                None => {
                    return StoreError::CorruptRow {
                        table: "leasehold_jobs",
                        detail: format!("job {id} has an unknown state"),
                    };
                }
            }
        }
        // Every job fits now: one changed state between the statement and
        // this read (a claim, a settle). Said as such; nothing was changed.
        StoreError::InvalidOption {
            option: "ids",
            reason: "a job changed state while this ran; nothing was changed, try again".to_owned(),
        }
    }
}

/// Runs `work` (a handler of the claim `fence`) to its end. On PostgreSQL
/// it meanwhile listens for the cancel NOTIFY of that claim and renews at
/// once when one comes: a renewal that answers lost stops the work now,
/// rather than at the runner's next renewal. The work gets a signal with
/// an abort of its own for that ([`AbortSignal::detached`]; it fires on the
/// runner's aborts too); once the work ended on a cancel, its answer waits for the
/// runner's own renewal to find the claim lost (within one heartbeat), so
/// the runner counts the item as lost and never as failed. The NOTIFY is
/// only a hint (a lost LISTEN connection wakes every subscriber): the
/// fenced renewal decides, and a failed one leaves it to the runner's
/// renewals. On SQLite it is `work(signal).await`.
pub(crate) async fn until_cancelled<T, F: Future<Output = T>>(
    store: &Store,
    fence: Fence,
    clock: impl Clock,
    signal: AbortSignal,
    work: impl FnOnce(AbortSignal) -> F,
) -> T {
    let Some(notices) = store.cancel_notices(fence).await else {
        return work(signal).await;
    };
    let own = signal.detached();
    let mut work = std::pin::pin!(work(own.clone()));
    let mut watch = std::pin::pin!(async {
        loop {
            notices.notified().await;
            if store.heartbeat(fence, clock.now()).await.is_ok_and(|outcome| !outcome.is_updated()) {
                return;
            }
        }
    });
    let mut cancelled = false;
    loop {
        tokio::select! {
            answer = &mut work => {
                if cancelled {
                    signal.aborted().await;
                }
                return answer;
            }
            () = &mut watch, if !cancelled => {
                cancelled = true;
                own.abort_lost();
            }
        }
    }
}

impl Store {
    /// A subscription to the cancel NOTIFY of the claim `fence`
    /// (`<schema>/cancel/<id>/<token>`), on PostgreSQL; `None` on SQLite, or
    /// when the LISTEN connection cannot be opened (the renewals find out).
    async fn cancel_notices(&self, fence: Fence) -> Option<Wakeups> {
        if self.ensure_listener().await.ok()? {
            let key = format!("cancel/{}/{}", fence.job.0, fence.token);
            let notify = self.inner.wakers.subscribe(&key);
            return Some(Wakeups { queue: key, notify, _store: self.inner.clone() });
        }
        None
    }
}

impl<'a> Selection<'a> {
    fn ids(ids: &[JobId], states: &'a [&'a str], expected: &'static str) -> Selection<'a> {
        let mut ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
        ids.sort_unstable();
        ids.dedup();
        Selection { ids: Some(ids), queue: None, states, expected }
    }

    /// Whether the changed rows are all that was asked for (a queue
    /// selection takes whatever matched).
    pub(crate) fn complete(&self, changed: usize) -> bool {
        self.ids.as_ref().is_none_or(|ids| ids.len() == changed)
    }
}

fn ids_of(changed: Vec<Steered>) -> Vec<JobId> {
    changed.into_iter().map(|c| JobId(c.id)).collect()
}

/// A retry's changed rows as [`Retried`]s; a time that is no ms since the
/// Unix epoch is a corrupt row.
fn retried(changed: Vec<Steered>) -> StoreResult<Vec<Retried>> {
    let millis = |column, value| validate::unsigned("leasehold_jobs", column, value).map(Millis);
    changed
        .into_iter()
        .map(|c| {
            let Some(due) = c.due else {
                return Err(StoreError::CorruptRow { table: "leasehold_jobs", detail: format!("job {} was retried without its due time", c.id) });
            };
            let watch = due.watch_ms.map(|ms| millis("lease_ms", ms)).transpose()?;
            Ok(Retried {
                id: JobId(c.id),
                at: millis("now", due.now)?,
                due_at: millis("run_at", due.run_at)?,
                watch: watch.map(|ms| Duration::from_millis(ms.0)),
            })
        })
        .collect()
}

/// What the attempt log says of a cancelled attempt.
pub(crate) fn cancel_note(by: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("cancelled by {by}: {reason}"),
        None => format!("cancelled by {by}"),
    }
}

fn check_cancel_text(by: &str, reason: Option<&str>) -> StoreResult<()> {
    let too_long = |option: &'static str| StoreError::InvalidOption {
        option,
        reason: format!("at most {MAX_CANCEL_TEXT} bytes"),
    };
    if by.is_empty() {
        return Err(StoreError::InvalidOption { option: "by", reason: "say who steers the queue".to_owned() });
    }
    if by.len() > MAX_CANCEL_TEXT {
        return Err(too_long("by"));
    }
    if reason.is_some_and(|r| r.len() > MAX_CANCEL_TEXT) {
        return Err(too_long("reason"));
    }
    // PostgreSQL's text columns refuse it; SQLite's would keep it. Refused
    // on both, so a steer means the same on either.
    for (option, text) in [("by", Some(by)), ("reason", reason)] {
        if text.is_some_and(|t| t.contains('\0')) {
            return Err(StoreError::InvalidOption {
                option,
                reason: "holds the NUL character (U+0000), which PostgreSQL cannot store".to_owned(),
            });
        }
    }
    Ok(())
}
