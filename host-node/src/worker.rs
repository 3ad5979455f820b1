//! A store and a handler as a runner [`Job`]: `Worker::new(store, "queue",
//! handler)` is all a user writes.
//!
//! Claims take a page of up to `page` jobs in one statement and hand them to
//! the runner one at a time. Renewals are the store's fenced heartbeat; the handler's outcome
//! is written with the fenced `complete` / `fail` (retry with backoff, then
//! dead letter), after its result, if any, with `record_result`. A settle
//! write that fails on a database error is tried again (0.1 s doubling to
//! 2 s) for as long as the attempt holds its claim, so a database that was
//! away for a moment does not make a finished job run again.
//!
//! A failed attempt that was settled (queued again or dead-lettered) is, to
//! the runner, work performed: the failure belongs to the job, not to the
//! pass, so it does not back the pass off. Job outcomes are reported to the
//! [`Worker::on_settled`] hook instead.

use crate::runner::{AbortSignal, BoxError, ClaimLost, Clock, Job, TokioClock};
use crate::store::{ClaimedJob, FailOutcome, Store, StoreError, StoreResult};
use leasehold_core::lease::OwnerId;
use leasehold_core::Millis;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The work for one job: gets the claimed job (payload, attempt, timeout) and
/// the signal that fires when its claim is lost or lapses.
///
/// `Ok(Some(result))` completes the job and records `result` with it;
/// `Ok(None)` completes it; `Err(e)` fails the attempt with `e`'s message
/// (retried with backoff until the attempt budget is spent, then
/// dead-lettered). After the signal fired nothing is written: the job is
/// somebody else's now.
pub trait Handler: Send + Sync + 'static {
    /// Handles one job.
    fn handle(
        &self,
        job: &ClaimedJob,
        signal: AbortSignal,
    ) -> impl Future<Output = Result<Option<serde_json::Value>, BoxError>> + Send;
}

/// How one attempt of a job ended, as the worker settled it: what
/// [`Worker::on_settled`] is told once per attempt handed to the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// The handler succeeded and the job is done.
    Completed,
    /// The handler failed with `error`; attempts remain, so the job is queued
    /// again, due at `at` (ms since the Unix epoch, the retry backoff).
    Retrying {
        /// The new due time.
        at: Millis,
        /// The handler's error, as text.
        error: String,
    },
    /// The handler failed with `error` on the last attempt: the job is
    /// dead-lettered.
    DeadLettered {
        /// The handler's error, as text.
        error: String,
    },
    /// The claim was lost (another worker holds the job, or the job is gone)
    /// or lapsed before the outcome could be written: nothing was written.
    Lost {
        /// True when supervision lapsed the claim (renewals stopped
        /// confirming) rather than a write answering that it is lost.
        lapsed: bool,
    },
}

/// The hook [`Worker::on_settled`] installs.
type SettledHook = Arc<dyn Fn(&ClaimedJob, &Settlement) + Send + Sync>;

/// Page items older than this (since their page was claimed, on the runner's
/// clock) are renewed before they are handed over, so the runner's view of
/// the lease stamp never lags the store's by more than a small slice of the
/// skew allowance.
const PAGE_FRESH_MS: u64 = 100;

struct Page {
    jobs: VecDeque<ClaimedJob>,
    claimed_at: Millis,
}

/// A runner [`Job`] over a [`Store`] queue. See the module docs.
pub struct Worker<H> {
    store: Store,
    queue: String,
    owner: OwnerId,
    lease: Duration,
    page_size: usize,
    page: Mutex<Page>,
    clock: TokioClock,
    handler: H,
    on_settled: Option<SettledHook>,
}

impl<H: Handler> Worker<H> {
    /// A worker on `queue` of `store`, claiming as this process
    /// ([`crate::liveness::current_owner`]) with a 30 s lease and pages of 1.
    pub fn new(store: Store, queue: impl Into<String>, handler: H) -> Self {
        Worker {
            store,
            queue: queue.into(),
            owner: crate::liveness::current_owner(),
            lease: Duration::from_secs(30),
            page_size: 1,
            page: Mutex::new(Page { jobs: VecDeque::new(), claimed_at: Millis::ZERO }),
            clock: TokioClock::new(),
            handler,
            on_settled: None,
        }
    }

    /// The lease each claim and renewal stamps (use the runner's
    /// `stale_after`).
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Jobs one claim statement takes (use the runner's concurrency).
    #[must_use]
    pub fn page_size(mut self, page: usize) -> Self {
        self.page_size = page.clamp(1, crate::store::MAX_PAGE);
        self
    }

    /// Calls `hook` with each attempt's [`Settlement`] once it is written (or
    /// known lost), from the task that performs the job: keep it quick (the
    /// command-line tool appends it to its event log). Replaces an earlier
    /// hook.
    #[must_use]
    pub fn on_settled(mut self, hook: impl Fn(&ClaimedJob, &Settlement) + Send + Sync + 'static) -> Self {
        self.on_settled = Some(Arc::new(hook));
        self
    }

    fn settled(&self, job: &ClaimedJob, settlement: Settlement) {
        if let Some(hook) = &self.on_settled {
            hook(job, &settlement);
        }
    }

    /// Records the handler's result, if any, then completes the job: each
    /// write retried after a database error while the claim holds (see
    /// [`until_written`]).
    async fn complete(
        &self,
        job: &ClaimedJob,
        result: Option<&serde_json::Value>,
        signal: &AbortSignal,
    ) -> Result<Settlement, SettleEnd> {
        if let Some(result) = result {
            until_written(signal, || self.store.record_result(job.fence(), result, self.clock.now())).await?;
        }
        let fence = until_written(signal, || self.store.complete(job.fence(), self.clock.now())).await?;
        Ok(if fence.is_updated() { Settlement::Completed } else { Settlement::Lost { lapsed: false } })
    }

    /// Fails the attempt with `error` (queued again after the backoff, or
    /// dead-lettered), retried after a database error while the claim holds.
    async fn fail(&self, job: &ClaimedJob, error: &str, signal: &AbortSignal) -> Result<Settlement, SettleEnd> {
        let outcome = until_written(signal, || self.store.fail(job.fence(), error, self.clock.now())).await?;
        Ok(match outcome {
            FailOutcome::Retrying { at } => Settlement::Retrying { at, error: error.to_owned() },
            FailOutcome::DeadLettered => Settlement::DeadLettered { error: error.to_owned() },
            FailOutcome::Lost(_) => Settlement::Lost { lapsed: false },
        })
    }

    /// The identity claims are recorded under.
    pub fn owner(&self) -> &OwnerId {
        &self.owner
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn take_from_page(&self, at: Millis) -> Option<(ClaimedJob, bool)> {
        let mut page = self.page.lock().unwrap();
        let job = page.jobs.pop_front()?;
        Some((job, at.since(page.claimed_at) > PAGE_FRESH_MS))
    }
}

impl<H: Handler> Job for Worker<H> {
    type Item = Arc<ClaimedJob>;
    const HEARTBEAT: bool = true;

    async fn claim(&self, at: Millis) -> Result<Option<Arc<ClaimedJob>>, BoxError> {
        loop {
            if let Some((job, stale)) = self.take_from_page(at) {
                // A job that waited in the page is renewed first, so its
                // lease starts now as far as the runner knows.
                if stale && !self.store.heartbeat(job.fence(), at).await?.is_updated() {
                    continue;
                }
                return Ok(Some(Arc::new(job)));
            }
            let jobs = self.store.claim_page(&self.queue, &self.owner, at, self.lease, self.page_size).await?;
            if jobs.is_empty() {
                return Ok(None);
            }
            let mut page = self.page.lock().unwrap();
            page.jobs.extend(jobs);
            page.claimed_at = at;
        }
    }

    async fn perform(&self, job: Arc<ClaimedJob>, signal: AbortSignal) -> Result<(), BoxError> {
        let outcome = self.handler.handle(&job, signal.clone()).await;
        // Lost or lapsed: settle nothing, the job is somebody else's now.
        if let Err(lost) = signal.check() {
            self.settled(&job, Settlement::Lost { lapsed: lost.lapsed });
            return Err(lost.into());
        }
        let completing = outcome.is_ok();
        let written = match outcome {
            Ok(result) => self.complete(&job, result.as_ref(), &signal).await,
            Err(error) => self.fail(&job, &error.to_string(), &signal).await,
        };
        match written {
            Ok(settlement) => {
                // A completion that lost its fence is an error to the runner;
                // a failure that did is not (the job was not ours to fail).
                let lost_completion = completing && matches!(settlement, Settlement::Lost { .. });
                self.settled(&job, settlement);
                if lost_completion {
                    return Err(format!("job {} lost its fence before completing", job.id.0).into());
                }
                Ok(())
            }
            Err(SettleEnd::Lost(lost)) => {
                self.settled(&job, Settlement::Lost { lapsed: lost.lapsed });
                Err(lost.into())
            }
            Err(SettleEnd::Failed(error)) => Err(error),
        }
    }

    async fn heartbeat(&self, job: Arc<ClaimedJob>, at: Millis) -> Result<bool, BoxError> {
        Ok(self.store.heartbeat(job.fence(), at).await?.is_updated())
    }
}

/// The first wait, in ms, before a settle write is tried again after a
/// database error; it doubles up to the core's recovery cap
/// ([`leasehold_core::backoff::recovery_backoff`]).
const SETTLE_RETRY_FIRST_MS: f64 = 100.0;

/// How a settle write ended without an answer from the store.
enum SettleEnd {
    /// The claim was lost or lapsed while the write kept failing.
    Lost(ClaimLost),
    /// An error that trying again would not mend (not a database error).
    Failed(BoxError),
}

/// Runs a settle write (`record_result`, `complete`, `fail`), trying it again
/// after a database error, with backoff, for as long as the attempt holds its
/// claim. A completion that could not be written while the database was away
/// lands once it is back, instead of the job running a second time after its
/// lease; the write is fenced, so a late one changes nothing if the job was
/// taken meanwhile. Ends with the signal's [`ClaimLost`] once the claim is
/// lost or lapses (the runner lapses it when heartbeats keep failing).
async fn until_written<T, Fut>(signal: &AbortSignal, mut write: impl FnMut() -> Fut) -> Result<T, SettleEnd>
where
    Fut: Future<Output = StoreResult<T>>,
{
    let backoff = leasehold_core::backoff::recovery_backoff(SETTLE_RETRY_FIRST_MS);
    let mut failures = 0u32;
    loop {
        match write().await {
            Ok(answer) => return Ok(answer),
            Err(StoreError::Database(e)) => {
                failures = failures.saturating_add(1);
                tracing::warn!(target: "leasehold::worker", "settling a job failed, trying again in {}ms: {e}", backoff.delay_after(failures));
            }
            Err(other) => return Err(SettleEnd::Failed(other.into())),
        }
        tokio::select! {
            lost = signal.aborted() => return Err(SettleEnd::Lost(lost)),
            () = tokio::time::sleep(Duration::from_millis(backoff.delay_after(failures))) => {}
        }
    }
}
