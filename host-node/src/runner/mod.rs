//! The tokio job runner, driving the core
//! [`leasehold_core::runner::Runner`] from one task.
//!
//! ```no_run
//! use leasehold::runner::{AbortSignal, BoxError, Job, JobRunner};
//! use leasehold::core::Millis;
//! use std::time::Duration;
//!
//! struct Emails;
//! impl Job for Emails {
//!     type Item = u64;
//!     async fn claim(&self, _at: Millis) -> Result<Option<u64>, BoxError> { Ok(None) }
//!     async fn perform(&self, id: u64, signal: AbortSignal) -> Result<(), BoxError> {
//!         signal.check()?;
//!         println!("sending {id}");
//!         Ok(())
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let runner = JobRunner::builder("notifications.deliver")
//!     .interval(Duration::from_secs(1))
//!     .stale_after(Duration::from_secs(30))
//!     .concurrency(8)
//!     .spawn(Emails)?;
//! runner.start();
//! # runner.dispose().await; Ok(()) }
//! ```

mod clock;
mod driver;
mod event;
mod future_slot;
mod job;
mod signal;
mod wakers;

pub use clock::{Clock, TokioClock};
pub use event::{JobEvent, Observer, PassReport};
pub use job::{BoxError, Job, JobError, Settled};
pub use leasehold_core::backoff::{job_backoff, Backoff};
pub use leasehold_core::options::{OptionError, Scheduling, DEFAULT_JOB_BATCH_LIMIT};
pub use signal::{AbortSignal, ClaimLost, JOB_CLAIM_LOST};

use driver::Command;
use leasehold_core::options::{AbortGrace, OptionNames, OptionsInput};

/// The builder's method names, in the lease-timing refusals of
/// [`JobRunnerBuilder::spawn`].
const RUST_NAMES: OptionNames = OptionNames {
    stale_after: "stale_after",
    heartbeat_every: "heartbeat_every",
    heartbeat_skew: "heartbeat_skew",
    abort_grace: "abort_grace",
    unit: "ms",
};
use leasehold_core::runner::Runner;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// A trace sink. A sink that panics costs the pass
/// nothing.
pub type Sink = Arc<dyn Fn(&JobEvent) + Send + Sync>;

/// Where a runner's events go: the observers inside the process, then the
/// user's sink. With neither, the core builds no event.
#[derive(Clone, Default)]
pub(crate) struct Sinks {
    pub(crate) observers: Vec<Arc<dyn Observer>>,
    pub(crate) sink: Option<Sink>,
}

impl Sinks {
    fn any(&self) -> bool {
        self.sink.is_some() || !self.observers.is_empty()
    }
}

/// Builds a [`JobRunner`].
#[must_use]
pub struct JobRunnerBuilder {
    name: Arc<str>,
    options: OptionsInput,
    clock: Option<Arc<dyn Clock>>,
    sinks: Sinks,
}

fn ms(d: Duration) -> f64 {
    d.as_millis() as f64
}

impl JobRunnerBuilder {
    /// The delay between passes (default 1 s; at
    /// least 1 ms).
    pub fn interval(mut self, interval: Duration) -> Self {
        self.options.interval_ms = ms(interval);
        self
    }

    /// How long a claim survives without a renewal
    /// (default 30 s). Pass the same value your claim statement uses (a
    /// [`crate::worker::Worker`]'s lease): `spawn` refuses a job whose
    /// [`Job::store_lease`] is shorter.
    pub fn stale_after(mut self, stale_after: Duration) -> Self {
        self.options.stale_after_ms = ms(stale_after);
        self
    }

    /// The renewal cadence (default a third of
    /// `stale_after`, never under 250 ms). Must be under half of
    /// `stale_after` when the job renews.
    pub fn heartbeat_every(mut self, every: Duration) -> Self {
        self.options.heartbeat_every_ms = Some(ms(every));
        self
    }

    /// Our `heartbeatSkewMs`: the clock skew allowed between workers
    /// (default half the cadence). Supervision lapses a claim whose renewals
    /// stop confirming at least this long before a peer may reclaim it.
    pub fn heartbeat_skew(mut self, skew: Duration) -> Self {
        self.options.heartbeat_skew_ms = Some(ms(skew));
        self
    }

    /// Backoff after raising passes (see [`job_backoff`]). Without it a raising pass
    /// waits the plain interval.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.options.backoff = Some(backoff);
        self
    }

    /// Claim attempts per pass (default 25).
    pub fn batch_limit(mut self, limit: u64) -> Self {
        self.options.batch_limit = Some(limit as f64);
        self
    }

    /// When claims are made (default [`Scheduling::Passes`]). A worker pool
    /// on a job queue wants [`Scheduling::Queue`]: each free slot claims as
    /// soon as work may be there (after a found item, an ended item, a
    /// [`JobRunner::wake`]), the idle slots poll once per
    /// [`JobRunnerBuilder::interval`] for the whole pool, failed claims
    /// pause every claim for the [`JobRunnerBuilder::backoff`] delay, failed
    /// items back nothing off, and `stop` ends the claims at once; a pass is
    /// then a busy period, and the batch limit does not apply.
    pub fn scheduling(mut self, scheduling: Scheduling) -> Self {
        self.options.scheduling = scheduling;
        self
    }

    /// Items performed at once, clamped to 1..=64
    /// (default 1).
    pub fn concurrency(mut self, concurrency: u32) -> Self {
        self.options.concurrency = Some(f64::from(concurrency));
        self
    }

    /// How long a perform may run on after its signal fired before it is
    /// dropped and counted `claimLost` (default: the smaller of 5 s and what
    /// fits in the lease, see below).
    ///
    /// For a job that renews, the grace is part of the lease budget: the
    /// runner lapses a claim early enough that the perform has been dropped
    /// before a peer may reclaim it, `W + I + K + G < S` with `W` the write
    /// tolerance, `I` the cadence ([`JobRunnerBuilder::heartbeat_every`]),
    /// `K` the skew allowance ([`JobRunnerBuilder::heartbeat_skew`]), `G`
    /// this grace and `S` [`JobRunnerBuilder::stale_after`]. A longer grace
    /// leaves less write tolerance; one that would leave under half an
    /// interval of it is refused by [`JobRunnerBuilder::spawn`] with
    /// [`OptionError::GraceDoesNotFit`], naming `abort_grace` and
    /// `stale_after`.
    ///
    /// An abort decided late (this process frozen or starved past the
    /// lapse) leaves the perform only what is left of the grace before the
    /// item's exit deadline, and none past it, unless the job's work is
    /// guarded by a process of its own ([`Job::GUARDED`]).
    pub fn abort_grace(mut self, grace: Duration) -> Self {
        self.options.abort_grace = AbortGrace::Ms(ms(grace));
        self
    }

    /// The clock (default [`TokioClock`]: system time that
    /// follows `tokio::time::pause`).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// The trace sink: each event as a [`JobEvent`]. Without it or an
    /// [`JobRunnerBuilder::observe`]r no event is built.
    pub fn on_event(mut self, sink: impl Fn(&JobEvent) + Send + Sync + 'static) -> Self {
        self.sinks.sink = Some(Arc::new(sink));
        self
    }

    /// Adds an observer that sees each event as the core emits it (a
    /// [`crate::trace_ring::TraceSink`], a [`crate::pump::TraceJournal`]),
    /// before the [`JobRunnerBuilder::on_event`] sink; call once per observer.
    pub fn observe(mut self, observer: Arc<dyn Observer>) -> Self {
        self.sinks.observers.push(observer);
        self
    }

    /// Validates the options and spawns the runner's task on the current
    /// tokio runtime. The loop does not start until [`JobRunner::start`].
    ///
    /// # Errors
    /// [`OptionError`] naming the bad option (see
    /// [`OptionsInput::validate`]); the lease timings by this builder's
    /// method names (`stale_after`, `heartbeat_every`, `heartbeat_skew`,
    /// `abort_grace`), values in ms; [`OptionError::StoreLeaseTooShort`]
    /// when the job's [`Job::store_lease`] is shorter than `stale_after`;
    /// [`OptionError::InvalidQueueName`], naming the queue and the rule it
    /// breaks (empty, longer than 128 bytes, or a character outside
    /// `A-Z a-z 0-9 _ - . :`), when the job's [`Job::store_queue`] is no
    /// queue name a store accepts (a [`crate::worker::Worker`] made with
    /// one).
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn spawn<J: Job>(mut self, job: J) -> Result<JobRunner, OptionError> {
        if let Some(queue) = job.store_queue() {
            OptionError::check_queue(queue)?;
        }
        self.options.heartbeat = J::HEARTBEAT;
        self.options.drop_by_exit_deadline = !J::GUARDED;
        self.options.store_lease_ms = job.store_lease().map(ms);
        let config = self.options.validate()?;
        if let Some(lease) = &config.lease {
            job.bind_lease(lease);
        }
        let mut core = Runner::new(config, self.sinks.any());
        if J::SETTLES {
            core = core.with_settle_phase();
        }
        let clock = self.clock.unwrap_or_else(|| Arc::new(TokioClock::new()));
        let (commands, receiver) = mpsc::unbounded_channel();
        tokio::spawn(driver::drive(Arc::new(job), core, self.name.clone(), clock, self.sinks, receiver));
        Ok(JobRunner { name: self.name, commands })
    }
}

/// A running job loop. Cheap to clone; dropping the
/// last handle stops the loop (the pass in flight drains). The task never
/// keeps the runtime from shutting down.
#[derive(Clone, Debug)]
pub struct JobRunner {
    name: Arc<str>,
    commands: mpsc::UnboundedSender<Command>,
}

impl JobRunner {
    /// Starts building a runner named `name`.
    pub fn builder(name: impl Into<Arc<str>>) -> JobRunnerBuilder {
        JobRunnerBuilder {
            name: name.into(),
            options: OptionsInput {
                interval_ms: 1_000.0,
                stale_after_ms: 30_000.0,
                abort_grace: AbortGrace::Default,
                names: RUST_NAMES,
                ..OptionsInput::default()
            },
            clock: None,
            sinks: Sinks::default(),
        }
    }

    /// The runner's name, as given to [`JobRunner::builder`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A pass at once, then one per delay. A second start
    /// does nothing.
    pub fn start(&self) {
        let _ = self.commands.send(Command::Start);
    }

    /// One pass, joining the one in flight. After dispose,
    /// an idle report at once.
    pub async fn tick(&self) -> PassReport {
        let (reply, answer) = oneshot::channel();
        if self.commands.send(Command::Tick(reply)).is_err() {
            return PassReport::default();
        }
        answer.await.unwrap_or_default()
    }

    /// Idle, one pass now; during a pass, exactly one
    /// follow-up after it however many wakes arrive.
    pub fn wake(&self) {
        let _ = self.commands.send(Command::Wake);
    }

    /// No more passes are scheduled; a pending follow-up
    /// is dropped; the pass in flight drains.
    pub fn stop(&self) {
        let _ = self.commands.send(Command::Stop);
    }

    /// Stops and waits for the pass in flight. The
    /// runner can start again.
    pub async fn quiesce(&self) {
        let (reply, answer) = oneshot::channel();
        if self.commands.send(Command::Quiesce(reply)).is_ok() {
            let _ = answer.await;
        }
    }

    /// Quiesces for good; later `start`, `tick`, `wake`
    /// do nothing and `tick` answers an idle report.
    pub async fn dispose(&self) {
        let (reply, answer) = oneshot::channel();
        if self.commands.send(Command::Dispose(reply)).is_ok() {
            let _ = answer.await;
        }
    }
}
