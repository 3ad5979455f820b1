//! A store and a handler as a runner [`Job`]: `Worker::new(store, "queue",
//! handler)` is all a user writes.
//!
//! Claims take a page of up to `page` jobs in one statement and hand them to
//! the runner one at a time. Renewals are the store's fenced heartbeat.
//!
//! The work and the write of its outcome are two phases ([`Job::SETTLES`]).
//! The handler may be stopped by a lapse; once it answered, its outcome is
//! held ([`Unsettled`]) and written with the fenced `complete` / `fail`
//! (its result, if any, in the same statement) by the runner's settle
//! phase, tried again while the database cannot answer (0.1 s doubling to
//! 1.5 s) however long that takes, lapse or not: it lands if nobody took the
//! job meanwhile, and only a refused fence gives it up. So a database that
//! was away does not make finished work run again. Meanwhile this worker's
//! claims leave the held jobs alone, and should one come back to it anyway
//! (a claim held up past the job's lease takes this worker's own stale lease
//! over), its held outcome is written under the new lease instead of the
//! work running again. A claim the runner declined (heard too late to
//! perform) is released at once with the store's fenced release.
//!
//! A failed attempt that was settled (queued again or dead-lettered) is, to
//! the runner, work performed: the failure belongs to the job, not to the
//! pass, so it does not back the pass off. Job outcomes are reported to the
//! [`Worker::on_settled`] hook instead.

mod held;
mod stats;
#[cfg(all(test, feature = "sqlite"))]
mod tests;

pub use held::Unsettled;
pub use stats::{DEFAULT_RECORD_EVERY, WorkerStats};
#[cfg(feature = "metrics")]
pub(crate) use stats::Count;
pub(crate) use stats::Took;

use crate::runner::{AbortSignal, BoxError, ClaimLost, Clock, Job, JobError, Settled, TokioClock};
use crate::store::{ClaimedJob, FailOutcome, Store, StoreError, StoreResult};
use held::Reached;
use stats::PerformEnd;
use std::time::Instant;
use leasehold_core::lease::OwnerId;
use leasehold_core::Millis;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The work for one job: gets the claimed job (payload, attempt, timeout) and
/// the signal that fires when its claim is lost or lapses.
///
/// `Ok(Some(result))` completes the job and records `result` with it;
/// `Ok(None)` completes it; `Err(e)` fails the attempt with `e`'s message
/// (retried with backoff until the attempt budget is spent, then
/// dead-lettered), and a [`Failure`] error records its result with it. A
/// result holding the NUL character (`\u0000`, in a string or key), which
/// PostgreSQL's jsonb can not store, is not recorded: a success with one
/// fails the attempt instead, saying so, on every backend. The
/// handler writes nothing itself: the worker settles what it answered, even
/// when it answered after its signal fired (the write is fenced: it lands
/// only if nobody took the job meanwhile). To answer that the work stopped
/// without an outcome, raise the signal's [`ClaimLost`]
/// (`signal.check()?`, or the value of `signal.aborted()`): nothing is
/// written then.
pub trait Handler: Send + Sync + 'static {
    /// Whether the work runs in a process of its own that a guard ends by
    /// the lease's exit deadline ([`AbortSignal::deadline`]), `handle` only
    /// waiting to read how it ended: see [`Job::GUARDED`]. Default false.
    const GUARDED: bool = false;

    /// Handles one job.
    fn handle(
        &self,
        job: &ClaimedJob,
        signal: AbortSignal,
    ) -> impl Future<Output = Result<Option<serde_json::Value>, BoxError>> + Send;
}

/// A handler's failure that carries a result to record with it (the CLI:
/// the exit code and output tail of a command that failed). Raise it boxed:
/// `Err(Failure::new("exit code 3", json!({..})).into())`. Displayed as its
/// message, which becomes the attempt's error.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    message: String,
    result: serde_json::Value,
}

impl Failure {
    /// A failure with `message` (the attempt's error) and `result` (any
    /// JSON, recorded under the attempt's fence with the failure).
    pub fn new(message: impl Into<String>, result: serde_json::Value) -> Self {
        Failure { message: message.into(), result }
    }

    /// The attempt's error.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The result recorded with it.
    pub fn result(&self) -> &serde_json::Value {
        &self.result
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

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
    /// Nothing was written: the handler stopped without an outcome after its
    /// claim was lost or lapsed (`lapsed` says which), or the settle's fence
    /// was refused because another worker holds the job (or it is gone;
    /// `lapsed` false).
    Lost {
        /// True when supervision lapsed the claim (renewals stopped
        /// confirming) rather than a write answering that it is lost.
        lapsed: bool,
    },
}

/// The hook [`Worker::on_settled`] installs.
type SettledHook = Arc<dyn Fn(&ClaimedJob, &Settlement) + Send + Sync>;


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
    held: Unsettled,
    /// How long after its page was claimed (the runner's clock) a page's job
    /// is handed over without a renewal, ms: the runner's lease policy's
    /// [`leasehold_core::lease::LeasePolicy::claim_age_tolerance_ms`], told at
    /// spawn, so the runner's view of the lease stamp never lags the store's
    /// by more than the skew allowance leaves room for.
    claim_age_tolerance_ms: AtomicU64,
    on_settled: Option<SettledHook>,
    stats: WorkerStats,
    record_every: Option<Duration>,
    #[cfg(feature = "metrics")]
    metrics: Option<crate::metrics::WorkerMetrics>,
    /// The enqueue trace contexts of the claimed jobs not yet performed.
    #[cfg(feature = "otel")]
    traced: Mutex<std::collections::HashMap<crate::store::JobId, String>>,
}

impl<H: Handler> Worker<H> {
    /// A worker on `queue` of `store`, claiming as this process
    /// ([`crate::liveness::current_owner`]) with a 30 s lease and pages of 1.
    ///
    /// # Errors
    /// Nothing is checked here: a `queue` that is no queue name (1 to 128
    /// bytes of `A-Z a-z 0-9 _ - . :`, as [`Store::enqueue`] checks) is
    /// refused by [`crate::runner::JobRunnerBuilder::spawn`], before any
    /// claim, with [`leasehold_core::OptionError::InvalidQueueName`] naming
    /// the queue and the rule it breaks.
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
            held: Unsettled::new(),
            claim_age_tolerance_ms: AtomicU64::new(leasehold_core::lease::MAX_CLAIM_AGE_TOLERANCE_MS),
            on_settled: None,
            stats: WorkerStats::new(),
            record_every: Some(DEFAULT_RECORD_EVERY),
            #[cfg(feature = "metrics")]
            metrics: None,
            #[cfg(feature = "otel")]
            traced: Mutex::default(),
        }
    }

    /// The lease each claim and renewal stamps (default 30 s): give the
    /// runner's `stale_after`. A lease shorter than it is refused by
    /// [`crate::runner::JobRunnerBuilder::spawn`] (other workers would take
    /// over jobs this one still works on); a longer one is safe, but a
    /// crashed worker's jobs wait that long to be taken over.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Jobs one claim statement takes (use the runner's concurrency). A job
    /// that waited in its page longer than the runner's lease policy allows
    /// ([`leasehold_core::lease::LeasePolicy::claim_age_tolerance_ms`]: 100
    /// ms, or half the skew allowance when that is less) is renewed before it
    /// is handed to the handler, as the runner counts its lease from then.
    #[must_use]
    pub fn page_size(mut self, page: usize) -> Self {
        self.page_size = page.clamp(1, crate::store::MAX_PAGE);
        self
    }

    /// Counts into `stats`, shared with other workers of this process on
    /// the same queue (the slots of one pool), which then appear as one
    /// worker in the workers table. A worker has counters of its own
    /// otherwise.
    #[must_use]
    pub fn sharing_stats(mut self, stats: WorkerStats) -> Self {
        self.stats = stats;
        self
    }

    /// How often the worker records itself, with its counters, in the
    /// store's workers table ([`Store::workers`]): default every 5 s
    /// ([`DEFAULT_RECORD_EVERY`]), at least every 100 ms; `None` records
    /// nothing. Each record is one upsert, never a write per job. Workers
    /// sharing counters record as the first of them to claim asks.
    #[must_use]
    pub fn record_every(mut self, every: Option<Duration>) -> Self {
        self.record_every = every;
        self
    }

    /// Records into `metrics` too (feature `metrics`): how long claims,
    /// performs and renewals take, and the counters, under this worker's
    /// queue. Give every worker of the process the same one and serve
    /// [`crate::metrics::WorkerMetrics::render`]. Workers sharing counters
    /// ([`Worker::sharing_stats`]) record as the first of them to claim
    /// was told.
    #[cfg(feature = "metrics")]
    #[must_use]
    pub fn metrics(mut self, metrics: &crate::metrics::WorkerMetrics) -> Self {
        self.metrics = Some(metrics.clone());
        self
    }

    /// What this worker (and those sharing its counters) counted: claims,
    /// outcomes, renewals, lapses, losses and steals.
    pub fn stats(&self) -> &WorkerStats {
        &self.stats
    }

    /// The outcomes this worker holds unsettled (a handle on the live set:
    /// clone it to watch it while the runner owns the worker).
    pub fn unsettled(&self) -> &Unsettled {
        &self.held
    }

    /// Calls `hook` with each attempt's [`Settlement`] once it is written (or
    /// known lost), from the runner's task: keep it quick (the command-line
    /// tool appends it to its event log). Replaces an earlier hook.
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

    /// Writes `reached` under `job`'s fence: the completion or the failure,
    /// with its result, if any, in the same fenced write. `Ok(None)`: the
    /// fence was refused (and nothing was written).
    async fn write(&self, job: &ClaimedJob, reached: &Reached) -> StoreResult<Option<Settlement>> {
        let now = self.clock.now();
        Ok(match reached {
            Reached::Completed(result) => {
                let landed = self.store.complete(job.fence(), result.as_ref(), now).await?.is_updated();
                landed.then_some(Settlement::Completed)
            }
            Reached::Failed { error, result } => match self.store.fail(job.fence(), error, result.as_ref(), now).await? {
                FailOutcome::Retrying { at } => Some(Settlement::Retrying { at, error: error.clone() }),
                FailOutcome::DeadLettered => Some(Settlement::DeadLettered { error: error.clone() }),
                FailOutcome::Lost(_) => None,
            },
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

    /// Records a claim's batch size on its span and, when a tracer records
    /// it, keeps the claimed jobs' enqueue trace contexts for their process
    /// spans (a failed read only loses the links).
    #[cfg(feature = "otel")]
    async fn trace_claimed(&self, span: &tracing::Span, jobs: &[ClaimedJob]) {
        crate::otel::received(span, jobs.len());
        if jobs.is_empty() || crate::otel::traceparent(span).is_none() {
            return;
        }
        let ids: Vec<_> = jobs.iter().map(|job| job.id).collect();
        match self.store.trace_contexts(&ids).await {
            Ok(found) => self.traced.lock().unwrap().extend(found),
            Err(e) => tracing::debug!(target: "leasehold::otel", "reading the claimed jobs' trace contexts failed: {e}"),
        }
    }

    fn take_from_page(&self, at: Millis) -> Option<(ClaimedJob, bool)> {
        let mut page = self.page.lock().unwrap();
        let job = page.jobs.pop_front()?;
        Some((job, at.since(page.claimed_at) > self.claim_age_tolerance_ms.load(Ordering::Relaxed)))
    }
}

/// What the handler's answer is to the settle: `None` when it stopped
/// without an outcome (it raised its signal's [`ClaimLost`]).
fn reached(outcome: Result<Option<serde_json::Value>, BoxError>) -> Result<Reached, ClaimLost> {
    let error = match outcome {
        Ok(result) => return Ok(Reached::Completed(result)),
        Err(error) => error,
    };
    let error = match error.downcast::<ClaimLost>() {
        Ok(lost) => return Err(*lost),
        Err(error) => error,
    };
    Ok(match error.downcast::<Failure>() {
        Ok(failure) => Reached::Failed { error: failure.message, result: Some(failure.result) },
        Err(error) => Reached::Failed { error: error.to_string(), result: None },
    })
}

/// What a handler answered, with a result the store would refuse (holding
/// the NUL character: [`Store::complete`] and [`Store::fail`] refuse it
/// before writing) left out, saying so: a success with one becomes a failed
/// attempt, a failure keeps its error without it. Held as it was, its
/// settle would be refused at every try and the attempt given up, to run
/// again once stale.
fn storable(reached: Reached) -> Reached {
    use crate::store::validate::{holds_nul, NUL_IN_JSON};
    match reached {
        Reached::Completed(Some(result)) if holds_nul(&result) => {
            Reached::Failed { error: format!("the handler's result {NUL_IN_JSON}"), result: None }
        }
        Reached::Failed { error, result: Some(result) } if holds_nul(&result) => {
            Reached::Failed { error: format!("{error} (its result was left out: it {NUL_IN_JSON})"), result: None }
        }
        reached => reached,
    }
}

impl<H: Handler> Job for Worker<H> {
    type Item = Arc<ClaimedJob>;
    const HEARTBEAT: bool = true;
    const SETTLES: bool = true;
    const GUARDED: bool = H::GUARDED;

    fn store_lease(&self) -> Option<Duration> {
        Some(self.lease)
    }

    fn store_queue(&self) -> Option<&str> {
        Some(&self.queue)
    }

    fn bind_lease(&self, policy: &leasehold_core::lease::LeasePolicy) {
        self.claim_age_tolerance_ms.store(policy.claim_age_tolerance_ms(), Ordering::Relaxed);
    }

    async fn claim(&self, at: Millis) -> Result<Option<Arc<ClaimedJob>>, BoxError> {
        loop {
            if let Some((job, stale)) = self.take_from_page(at) {
                // A job that waited in the page is renewed first, so its
                // lease starts now as far as the runner knows.
                if stale {
                    let started = Instant::now();
                    let renewed = self.store.heartbeat(job.fence(), at).await?.is_updated();
                    self.stats.took(Took::Renewal, started.elapsed());
                    if !renewed {
                        self.stats.lost();
                        continue;
                    }
                    self.stats.renewed();
                }
                return Ok(Some(Arc::new(job)));
            }
            self.stats.bind(&self.store, &self.queue, &self.owner, self.record_every);
            #[cfg(feature = "metrics")]
            if let Some(metrics) = &self.metrics {
                self.stats.attach(metrics, &self.queue);
            }
            let held = self.held.jobs();
            let started = Instant::now();
            let claim = self.store.claim_page_excluding(&self.queue, &self.owner, at, self.lease, self.page_size, &held);
            // Open but not entered meanwhile, so it has ended when this returns (see crate::otel).
            #[cfg(feature = "otel")]
            let span = crate::otel::receive(&self.queue);
            let jobs = claim.await;
            self.stats.took(Took::Claim, started.elapsed());
            let jobs = jobs?;
            #[cfg(feature = "otel")]
            self.trace_claimed(&span, &jobs).await;
            self.stats.claimed(jobs.len(), jobs.iter().filter(|job| job.reclaimed).count());
            if jobs.is_empty() {
                return Ok(None);
            }
            let mut page = self.page.lock().unwrap();
            page.jobs.extend(jobs);
            page.claimed_at = at;
        }
    }

    /// Runs the handler and holds what it answered for the settle; a
    /// handler that stopped on its signal settles nothing.
    async fn perform(&self, job: Arc<ClaimedJob>, signal: AbortSignal) -> Result<(), BoxError> {
        let watch = self.stats.watch(job.id, job.token, &signal);
        // Finished here under an earlier lease, its outcome still unwritten:
        // written under this one rather than run again (see Unsettled::adopt).
        if self.held.adopt(job.id, job.token) {
            tracing::debug!(target: "leasehold::worker", job = job.id.0, "settling the outcome this worker holds from the job's earlier lease");
            watch.ended(PerformEnd::Answered);
            return Ok(());
        }
        #[cfg(feature = "otel")]
        let span = {
            let enqueued = self.traced.lock().unwrap().remove(&job.id);
            crate::otel::process(&self.queue, job.id.0, enqueued.as_deref())
        };
        #[cfg(feature = "otel")]
        let lease_signal = signal.clone();
        let handle = |signal| self.handler.handle(&job, signal);
        let started = Instant::now();
        let answer = crate::store::until_cancelled(&self.store, job.fence(), self.clock, signal, handle);
        #[cfg(feature = "otel")]
        let answer = tracing::Instrument::instrument(answer, span.clone());
        let answer = answer.await;
        #[cfg(feature = "otel")]
        if let Some(lost) = lease_signal.reason() {
            crate::otel::lease_lost(&span, lost.lapsed);
        } else if let Err(error) = &answer
            && let Some(lost) = error.downcast_ref::<ClaimLost>()
        {
            crate::otel::lease_lost(&span, lost.lapsed);
        }
        match reached(answer).map(storable) {
            Ok(reached) => {
                self.stats.took(Took::Perform, started.elapsed());
                watch.ended(PerformEnd::Answered);
                self.held.hold(job.id, job.token, reached);
                Ok(())
            }
            Err(lost) => {
                watch.ended(PerformEnd::Lost { lapsed: lost.lapsed });
                self.settled(&job, Settlement::Lost { lapsed: lost.lapsed });
                Err(lost.into())
            }
        }
    }

    /// Writes the held outcome (a handler that panicked holds none: its
    /// attempt fails with the panic). A database error answers `Err`, and
    /// the runner tries again; any other store error (a malformed write,
    /// which trying again would not mend) is logged and gives the attempt
    /// up like a refused fence: the job comes back once its lease is stale.
    async fn settle(&self, job: Arc<ClaimedJob>, outcome: Result<(), JobError>) -> Result<Settled, BoxError> {
        let reached = self.held.get(job.id, job.token).unwrap_or_else(|| Reached::Failed {
            error: outcome.err().map_or_else(|| "the handler's outcome was not kept".to_owned(), |e| e.to_string()),
            result: None,
        });
        // Open but not entered meanwhile, so it has ended when the write has (see crate::otel).
        #[cfg(feature = "otel")]
        let span = crate::otel::settle(&self.queue, job.id.0);
        let written = self.write(&job, &reached).await;
        #[cfg(feature = "otel")]
        drop(span);
        let settlement = match written {
            Ok(Some(settlement)) => settlement,
            Ok(None) => {
                // Kept a lease longer: the takeover may be this worker's own,
                // its answer still on the way (see Unsettled::adopt).
                self.held.refused(job.id, job.token, Instant::now() + self.lease);
                Settlement::Lost { lapsed: false }
            }
            Err(StoreError::Database(error)) => return Err(StoreError::Database(error).into()),
            Err(other) => {
                tracing::error!(target: "leasehold::worker", job = job.id.0, "settling a job failed for good: {other}");
                Settlement::Lost { lapsed: false }
            }
        };
        self.held.release(job.id, job.token);
        self.stats.settled(job.id, job.token, &settlement);
        let landed = !matches!(settlement, Settlement::Lost { .. });
        self.settled(&job, settlement);
        Ok(if landed { Settled::Landed } else { Settled::FenceRefused })
    }

    async fn heartbeat(&self, job: Arc<ClaimedJob>, at: Millis) -> Result<bool, BoxError> {
        let started = Instant::now();
        let renewed = self.store.heartbeat(job.fence(), at).await;
        self.stats.took(Took::Renewal, started.elapsed());
        let renewed = renewed?.is_updated();
        if renewed {
            self.stats.renewed();
        }
        Ok(renewed)
    }

    /// Hands a claim the runner declined back to the queue at once (fenced;
    /// the attempt is not counted).
    async fn release(&self, job: Arc<ClaimedJob>) -> Result<(), BoxError> {
        if !self.store.release(job.fence(), self.clock.now()).await?.is_updated() {
            tracing::debug!(target: "leasehold::worker", job = job.id.0, "a declined claim was no longer ours to release");
        }
        Ok(())
    }
}
