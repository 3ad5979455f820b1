//! A pool of command workers on one queue: the store's [`Worker`] with the
//! command handler under one [`JobRunner`] with queue scheduling (each free
//! slot claims as soon as work may be there, idle slots poll in turns, failed
//! claims pause the whole pool), woken by the queue's wake-ups, its trace
//! events recorded to one event log (each job's settlement is in the store's
//! settlements journal), and the two-step shutdown.

use crate::events::Recorder;
use crate::fail::CliError;
use crate::handler::CommandHandler;
use leasehold::core::options::{AbortGrace, OptionNames};
use leasehold::runner::{JobRunner, Scheduling};
use leasehold::store::Store;
use leasehold::worker::{Unsettled, Worker, WorkerStats};
use std::path::Path;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Delay between idle polls of the queue, for the whole pool however many
/// slots are idle; wake-ups from enqueues in this process (and every
/// `NOTIFY` on PostgreSQL) have a free slot claim at once.
const IDLE_INTERVAL: Duration = Duration::from_millis(500);

/// How a pool works.
pub struct PoolConfig<'a> {
    /// The queue.
    pub queue: &'a str,
    /// Commands at once (1..=64).
    pub concurrency: u32,
    /// Between SIGTERM and SIGKILL for a stopped command (`None`: the
    /// default, see [`check_timings`]).
    pub grace: Option<Duration>,
    /// The lease of each claim.
    pub stale_after: Duration,
    /// The renewal cadence (`None`: the runner's default, a third of the lease).
    pub heartbeat_every: Option<Duration>,
    /// The event log folder.
    pub events: &'a Path,
    /// Where the slots record their durations and counters (`work --metrics`).
    pub metrics: Option<&'a leasehold::metrics::WorkerMetrics>,
}

/// SIGINT and SIGTERM, as one stream of interrupts.
pub struct Interrupts {
    int: Signal,
    term: Signal,
}

impl Interrupts {
    /// Listens for both from now on (replacing their default: exit).
    pub fn listen() -> Result<Interrupts, CliError> {
        let hook = |kind| signal(kind).map_err(|e| CliError::input(format!("cannot listen for signals: {e}")));
        Ok(Interrupts { int: hook(SignalKind::interrupt())?, term: hook(SignalKind::terminate())? })
    }

    /// The next SIGINT or SIGTERM.
    pub async fn next(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
    }
}

/// The longest lease a worker takes: 2^31 − 1 ms (about 24.8 days), the
/// longest delay the runner arms a timer for. Longer is a typo, not a lease.
const MAX_STALE_AFTER: Duration = Duration::from_millis(leasehold::core::backoff::MAX_DELAY_MS);

/// The shortest renewal cadence: each renewal is a database write.
const MIN_HEARTBEAT_EVERY: Duration = Duration::from_millis(100);

/// The least default cadence (the core's: a third of the stale window, never
/// under this), in the refusal of a window too short for any cadence.
const DEFAULT_HEARTBEAT_FLOOR: Duration = Duration::from_millis(250);

/// Checks the lease timings the way the runner will, with the flags' names,
/// so a bad set is refused before anything is queued; and our own bounds:
/// `--stale-after` at most [`MAX_STALE_AFTER`], `--heartbeat-every` at least
/// [`MIN_HEARTBEAT_EVERY`]. Answers the grace a stopped command gets: `grace`,
/// or by default the smaller of 5 s and what fits in the lease (the core's
/// rule: the command must be dead before a peer may reclaim its job, so the
/// grace comes out of the write tolerance).
pub fn check_timings(
    stale_after: Duration,
    heartbeat_every: Option<Duration>,
    grace: Option<Duration>,
) -> Result<Duration, CliError> {
    let refuse = |message: String| CliError::input(format!("invalid lease timings: {message}"));
    if stale_after > MAX_STALE_AFTER {
        return Err(refuse(format!(
            "--stale-after ({}) must be at most {}",
            humantime::format_duration(stale_after),
            humantime::format_duration(MAX_STALE_AFTER)
        )));
    }
    if let Some(grace) = grace.filter(|grace| *grace > MAX_STALE_AFTER) {
        return Err(refuse(format!(
            "--grace ({}) must be at most {}",
            humantime::format_duration(grace),
            humantime::format_duration(MAX_STALE_AFTER)
        )));
    }
    if let Some(every) = heartbeat_every.filter(|every| *every < MIN_HEARTBEAT_EVERY) {
        return Err(refuse(format!(
            "--heartbeat-every ({}) must be at least {} (each renewal is a database write)",
            humantime::format_duration(every),
            humantime::format_duration(MIN_HEARTBEAT_EVERY)
        )));
    }
    // Two renewals, each at least the shortest cadence apart, fit only in a longer window.
    let shortest = 2 * MIN_HEARTBEAT_EVERY;
    if stale_after <= shortest {
        return Err(refuse(format!(
            "--stale-after ({}ms) must be above {}ms: two renewals, at least {}ms apart (the shortest --heartbeat-every), \
             must fit in it, and above {}ms with the default heartbeat",
            stale_after.as_millis(),
            shortest.as_millis(),
            MIN_HEARTBEAT_EVERY.as_millis(),
            2 * DEFAULT_HEARTBEAT_FLOOR.as_millis(),
        )));
    }
    let input = leasehold::core::OptionsInput {
        interval_ms: 1_000.0,
        stale_after_ms: stale_after.as_millis() as f64,
        heartbeat: true,
        heartbeat_every_ms: heartbeat_every.map(|d| d.as_millis() as f64),
        abort_grace: grace.map_or(AbortGrace::Default, |g| AbortGrace::Ms(g.as_millis() as f64)),
        names: OptionNames {
            stale_after: "--stale-after",
            heartbeat_every: "--heartbeat-every",
            heartbeat_skew: "the skew allowance (half the heartbeat)",
            abort_grace: "--grace",
            unit: "ms",
        },
        ..Default::default()
    };
    // A cadence left out is named as the flag that sets it, and the core's
    // message says what it defaulted to.
    let config = input.validate().map_err(|e| refuse(e.to_string()))?;
    Ok(Duration::from_millis(config.abort_grace_ms.unwrap_or_default()))
}

/// The backoff of failing claims (the database is down), for the whole
/// pool: 0.5 s doubling up to the core's recovery cap (1.5 s), rather than
/// failing every 0.5 s; the cap keeps a recovered database noticed within
/// 2 s.
fn claim_backoff() -> leasehold::core::Backoff {
    leasehold::core::recovery_backoff(IDLE_INTERVAL.as_millis() as f64)
}

/// A running pool.
pub struct Pool {
    runner: JobRunner,
    hard_stop: watch::Sender<bool>,
    waker: JoinHandle<()>,
    recorder: Recorder,
    unsettled: Unsettled,
    /// The pool's counters, recorded as one worker in the workers table.
    stats: WorkerStats,
}

impl Pool {
    /// Starts working `config.queue` of `store`: one runner with
    /// `config.concurrency` slots, each performing one command at a time
    /// and claiming as soon as it is free (the idle slots poll once every
    /// [`IDLE_INTERVAL`] for the whole pool, besides the wake-ups).
    pub async fn start(store: &Store, config: PoolConfig<'_>) -> Result<Pool, CliError> {
        let grace = check_timings(config.stale_after, config.heartbeat_every, config.grace)?;
        let (hard_stop, stopped) = watch::channel(false);
        let name = format!("leasehold.{}", config.queue);
        let recorder = Recorder::open(config.events, &name, store, config.queue).await?;
        let handler = CommandHandler::new(grace, stopped);
        // Pages of one: a job claimed is a job started, so a drain (which
        // stops claiming) never strands claimed-but-unstarted jobs in a page
        // until their leases go stale.
        let mut worker = Worker::new(store.clone(), config.queue, handler)
            .lease(config.stale_after)
            // Job events come from the store's settlements journal.
            .page_size(1);
        if let Some(metrics) = config.metrics {
            worker = worker.metrics(metrics);
        }
        let unsettled = worker.unsettled().clone();
        let stats = worker.stats().clone();
        let mut builder = JobRunner::builder(name)
            .scheduling(Scheduling::Queue)
            .interval(IDLE_INTERVAL)
            .stale_after(config.stale_after)
            .concurrency(config.concurrency)
            .backoff(claim_backoff())
            // A stopped command gets its grace, then SIGKILL; the perform
            // is given up on then too (dropping it kills the group), so the
            // whole exit fits in the lease.
            .abort_grace(grace)
            .observe(recorder.journal.clone());
        if let Some(every) = config.heartbeat_every {
            builder = builder.heartbeat_every(every);
        }
        let runner = builder.spawn(worker).map_err(|e| CliError::input(format!("invalid lease timings: {e}")))?;
        let wakeups = store.listen(config.queue).await?;
        runner.start();
        // Every wake-up lets a free slot claim; while claims fail, the
        // runner holds them until its backoff's pause is over, so a
        // reconnecting listener's wake-ups do not each hit the database.
        let waker = tokio::spawn({
            let runner = runner.clone();
            async move {
                loop {
                    wakeups.notified().await;
                    runner.wake();
                }
            }
        });
        Ok(Pool { runner, hard_stop, waker, recorder, unsettled, stats })
    }

    /// Stops claiming and waits for the commands in flight to finish and
    /// their outcomes to be recorded; an interrupt meanwhile ends the
    /// commands (SIGTERM, then SIGKILL after the grace), failing their
    /// attempts. A command that finished is never given up on: while the
    /// database cannot record its outcome, the drain waits for it, whatever
    /// the interrupts (its fence makes the late write safe). Answers whether
    /// the commands were ended.
    pub async fn drain(self, interrupts: &mut Interrupts) -> bool {
        let mut ended = false;
        // No wake-up may claim again once the drain began; the stop ends
        // the claims of the busy period in flight.
        self.waker.abort();
        {
            let quiesce = self.runner.quiesce();
            tokio::pin!(quiesce);
            loop {
                tokio::select! {
                    () = &mut quiesce => break,
                    () = interrupts.next() => {
                        if !ended {
                            errln!("leasehold: ending the running commands");
                            ended = true;
                            self.hard_stop.send_replace(true);
                        }
                        let waiting = self.unsettled.len();
                        if waiting > 0 {
                            errln!(
                                "leasehold: waiting to record the outcome of {waiting} finished command(s) (the database does not answer yet)"
                            );
                        }
                    }
                }
            }
        }
        self.runner.dispose().await;
        self.recorder.close().await;
        if let Err(e) = self.stats.stop().await {
            tracing::debug!("recording this worker's stop failed: {e}");
        }
        ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_claims_try_again_within_two_seconds_however_long_they_failed() {
        let backoff = claim_backoff();
        assert_eq!(backoff.delay_after(1), IDLE_INTERVAL.as_millis() as u64, "the first wait is the idle interval");
        for failures in [2, 5, 10, 1_000, u32::MAX] {
            assert!(backoff.delay_after(failures) < 2_000, "after {failures} failures: {}ms", backoff.delay_after(failures));
        }
    }
}
