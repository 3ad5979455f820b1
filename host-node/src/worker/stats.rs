//! What a worker counts, and its record in the store's workers table.
//!
//! Counting is a handful of relaxed atomic adds on paths that already make a
//! database round trip; the record is one upsert per interval from a task of
//! its own ([`Store::record_worker`]), never a write per job.

use crate::runner::{AbortSignal, Clock, TokioClock};
use crate::store::{JobId, Patience, Store, StoreResult, WorkerCounters};
use leasehold_core::lease::OwnerId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// How often a worker records itself by default.
pub const DEFAULT_RECORD_EVERY: Duration = Duration::from_secs(5);

/// The counters of one worker (or of several that share them, as the slots
/// of the command-line tool's pool do), and its record in the store.
///
/// Cheap to clone: clones share the counters. The first [`super::Worker`]
/// that claims with it binds it to its store, queue and owner and, unless
/// recording is off ([`super::Worker::record_every`]), starts recording it
/// in the workers table ([`Store::workers`]): at once, then every interval,
/// until the last clone is dropped (then once more, marked stopped, if a
/// tokio runtime is still there) or [`WorkerStats::stop`].
#[derive(Clone, Debug, Default)]
pub struct WorkerStats {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// In [`Count`] order.
    counts: [AtomicU64; 8],
    /// The process's metrics of this queue, if the worker was given them.
    #[cfg(feature = "metrics")]
    metrics: OnceLock<crate::metrics::QueueMetrics>,
    binding: OnceLock<Binding>,
    stopped: AtomicBool,
    /// The attempts whose handler answered, until their settle ends: the
    /// perform's signal, to count a loss or lapse that comes while the
    /// outcome is being written, or `None` when one was counted already
    /// (so the refused settle that follows is not counted again).
    settling: Mutex<HashMap<(JobId, u64), Option<AbortSignal>>>,
}

/// Where the record goes.
#[derive(Debug)]
struct Binding {
    store: Store,
    queue: String,
    owner: OwnerId,
    clock: TokioClock,
    /// When it was bound (the worker's first claim): its first record's time.
    bound_at: leasehold_core::Millis,
}

/// Counts how one perform ended: a loss or lapse when it stopped on one,
/// when its signal fired before it answered, or when the runner dropped it
/// after its signal fired (the grace ran out: nothing after the drop runs,
/// so the count is taken as the watch is dropped with it).
pub(crate) struct PerformWatch<'a> {
    stats: &'a WorkerStats,
    job: JobId,
    token: u64,
    signal: AbortSignal,
    ended: bool,
}

impl PerformWatch<'_> {
    /// The perform ended with `end`.
    pub(crate) fn ended(mut self, end: PerformEnd) {
        self.ended = true;
        match end {
            PerformEnd::Lost { lapsed } => self.stats.lost_or_lapsed(lapsed),
            PerformEnd::Answered => {
                let fired = self.signal.reason();
                if let Some(reason) = &fired {
                    self.stats.lost_or_lapsed(reason.lapsed);
                }
                let signal = fired.is_none().then(|| self.signal.clone());
                self.stats.lock_settling().insert((self.job, self.token), signal);
            }
        }
    }
}

impl Drop for PerformWatch<'_> {
    fn drop(&mut self) {
        if !self.ended
            && let Some(reason) = self.signal.reason()
        {
            self.stats.lost_or_lapsed(reason.lapsed);
        }
    }
}

/// One of the counters, as an index (the order of [`WorkerCounters`]'s fields).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Count {
    Claimed = 0,
    Succeeded,
    Failed,
    DeadLettered,
    Renewals,
    Lapses,
    Losses,
    Steals,
}

/// What a duration measured (the metrics' histograms).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Took {
    /// One claim statement.
    Claim,
    /// One handler run that answered.
    Perform,
    /// One renewal.
    Renewal,
}

/// What a handler's perform ended with, for [`PerformWatch`].
pub(crate) enum PerformEnd {
    /// It answered an outcome (the signal may have fired meanwhile).
    Answered,
    /// It stopped on its claim's loss (`lapsed`: a lapse).
    Lost { lapsed: bool },
}

impl WorkerStats {
    /// New counters, all zero, bound to nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counters now.
    pub fn counters(&self) -> WorkerCounters {
        self.shared.counters()
    }

    /// Stops recording and records once more, marked stopped, answering
    /// when that write is done. Nothing when never bound (no claim was
    /// made). Later records are not written.
    ///
    /// # Errors
    /// The store's, as [`Store::record_worker`].
    pub async fn stop(&self) -> StoreResult<()> {
        self.shared.stopped.store(true, Ordering::SeqCst);
        match self.shared.binding.get() {
            Some(binding) => binding.record(self.counters(), true).await,
            None => Ok(()),
        }
    }

    /// Binds to where the record goes (the first call wins) and, with
    /// `every`, starts recording. Needs a tokio runtime (claims run on one).
    pub(crate) fn bind(&self, store: &Store, queue: &str, owner: &OwnerId, every: Option<Duration>) {
        if self.shared.binding.get().is_some() {
            return;
        }
        let clock = TokioClock::new();
        let binding = Binding { store: store.clone(), queue: queue.to_owned(), owner: owner.clone(), clock, bound_at: clock.now() };
        if self.shared.binding.set(binding).is_ok()
            && let Some(every) = every
        {
            tokio::spawn(record_every(Arc::downgrade(&self.shared), every.max(Duration::from_millis(100))));
        }
    }

    /// Hands the worker's records to `metrics` too, under `queue` (the
    /// first call wins).
    #[cfg(feature = "metrics")]
    pub(crate) fn attach(&self, metrics: &crate::metrics::WorkerMetrics, queue: &str) {
        if self.shared.metrics.get().is_none() {
            let _ = self.shared.metrics.set(metrics.for_queue(queue));
        }
    }

    fn add(&self, count: Count, n: u64) {
        self.shared.counts[count as usize].fetch_add(n, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        if let Some(metrics) = self.shared.metrics.get() {
            metrics.add(count, n);
        }
    }

    /// Records how long a claim, a perform or a renewal took (in the
    /// metrics' histograms, if any).
    pub(crate) fn took(&self, took: Took, span: Duration) {
        #[cfg(feature = "metrics")]
        if let Some(metrics) = self.shared.metrics.get() {
            metrics.observe(took, span);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (took, span);
    }

    /// A claim statement took `jobs`, `stolen` of them from stale owners.
    pub(crate) fn claimed(&self, jobs: usize, stolen: usize) {
        self.add(Count::Claimed, jobs as u64);
        if stolen > 0 {
            self.add(Count::Steals, stolen as u64);
        }
    }

    /// A renewal landed.
    pub(crate) fn renewed(&self) {
        self.add(Count::Renewals, 1);
    }

    fn lost_or_lapsed(&self, lapsed: bool) {
        self.add(if lapsed { Count::Lapses } else { Count::Losses }, 1);
    }

    /// A claim was found lost outside a perform (a page's job whose renewal
    /// was refused before it was handed over).
    pub(crate) fn lost(&self) {
        self.add(Count::Losses, 1);
    }

    /// Watches one perform of `job` under `token`: see [`PerformWatch`].
    pub(crate) fn watch(&self, job: JobId, token: u64, signal: &AbortSignal) -> PerformWatch<'_> {
        PerformWatch { stats: self, job, token, signal: signal.clone(), ended: false }
    }

    /// Counts a settle: landed as completed, retried or dead-lettered; or
    /// a loss or lapse that its perform's signal reports since the handler
    /// answered; or else, refused by the fence, a loss.
    pub(crate) fn settled(&self, job: JobId, token: u64, settlement: &super::Settlement) {
        let refused = matches!(settlement, super::Settlement::Lost { .. });
        match self.lock_settling().remove(&(job, token)) {
            // Counted as the perform ended.
            Some(None) => {}
            Some(Some(signal)) => match signal.reason() {
                Some(reason) => self.lost_or_lapsed(reason.lapsed),
                None if refused => self.lost_or_lapsed(false),
                None => {}
            },
            None if refused => self.lost_or_lapsed(false),
            None => {}
        }
        let landed = match settlement {
            super::Settlement::Completed => Count::Succeeded,
            super::Settlement::Retrying { .. } => Count::Failed,
            super::Settlement::DeadLettered { .. } => Count::DeadLettered,
            super::Settlement::Lost { .. } => return,
        };
        self.add(landed, 1);
    }

    fn lock_settling(&self) -> std::sync::MutexGuard<'_, HashMap<(JobId, u64), Option<AbortSignal>>> {
        self.shared.settling.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Shared {
    fn counters(&self) -> WorkerCounters {
        let get = |count: Count| self.counts[count as usize].load(Ordering::Relaxed);
        WorkerCounters {
            claimed: get(Count::Claimed),
            succeeded: get(Count::Succeeded),
            failed: get(Count::Failed),
            dead_lettered: get(Count::DeadLettered),
            renewals: get(Count::Renewals),
            lapses: get(Count::Lapses),
            losses: get(Count::Losses),
            steals: get(Count::Steals),
        }
    }
}

impl Binding {
    async fn record(&self, counters: WorkerCounters, stopped: bool) -> StoreResult<()> {
        self.store.record_worker(&self.queue, &self.owner, &counters, stopped, self.clock.now()).await
    }
}

/// Records the worker at once and then every `every`, until its counters
/// are dropped or stopped. A failed write is logged at debug level (the
/// claims report an unreachable database) and the next one tries again.
///
/// Every record writes only when that holds up nobody ([`Patience::IfIdle`]:
/// a record waiting on SQLite's one connection behind a locked file would
/// starve the claims it reports on). The first stamps `started_at`, and the
/// worker's own first claim holds that connection as it is made: so until
/// one has landed, the record is tried again every [`FIRST_RECORD_RETRY`]
/// rather than an interval later, and carries the instant the worker was
/// bound (its first claim) as its time, whenever it lands. It landed an
/// interval late (or, on a busy worker, only at its stop), and the worker
/// showed as started that much late.
async fn record_every(shared: Weak<Shared>, every: Duration) {
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut started = None;
    loop {
        match started {
            Some(_) => drop(ticker.tick().await),
            None => tokio::time::sleep(FIRST_RECORD_RETRY.min(every)).await,
        }
        let (store, queue, owner, counters, now) = {
            let Some(shared) = shared.upgrade() else { return };
            if shared.stopped.load(Ordering::SeqCst) {
                return;
            }
            let Some(b) = shared.binding.get() else { return };
            let now = if started.is_some() { b.clock.now() } else { b.bound_at };
            (b.store.clone(), b.queue.clone(), b.owner.clone(), shared.counters(), now)
        };
        match store.record(&queue, &owner, &counters, false, now, Patience::IfIdle).await {
            Ok(true) => started = Some(now),
            Ok(false) => tracing::debug!(target: "leasehold::worker", "the database is busy: this worker is recorded at the next turn"),
            Err(e) => tracing::debug!(target: "leasehold::worker", "recording this worker failed (tried again in {every:?}): {e}"),
        }
    }
}

/// How soon a worker's first record, skipped because the database was busy,
/// is tried again.
const FIRST_RECORD_RETRY: Duration = Duration::from_millis(100);

impl Drop for Shared {
    /// The last clone is gone: record once more, marked stopped, if a tokio
    /// runtime can run the write.
    fn drop(&mut self) {
        if self.stopped.load(Ordering::SeqCst) {
            return;
        }
        let Some(binding) = self.binding.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let counters = self.counters();
        runtime.spawn(async move {
            let _ = binding.record(counters, true).await;
        });
    }
}
