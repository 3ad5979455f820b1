//! A pool of command workers on one queue: per slot, the store's [`Worker`]
//! with the command handler under a [`JobRunner`] of its own (the comment
//! in [`Pool::start`] says why not one runner for all), woken by the queue's
//! wake-ups, their trace events (tagged with the slot) recorded to one event
//! log (each job's settlement is in the store's settlements journal), and
//! the two-step shutdown.

use crate::events::Recorder;
use crate::fail::CliError;
use crate::handler::CommandHandler;
use crate::turns::Turns;
use leasehold::core::options::{AbortGrace, OptionNames};
use leasehold::core::Millis;
use leasehold::core::Event;
use leasehold::pump::TraceJournal;
use leasehold::runner::{AbortSignal, BoxError, Job, JobError, JobRunner, Observer, Settled};
use leasehold::store::Store;
use leasehold::worker::{Unsettled, Worker, WorkerStats};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Delay between idle polls of the queue, one idle slot at a time (see
/// [`crate::turns`]); wake-ups from enqueues in this process (and every
/// `NOTIFY` on PostgreSQL) start a pass in every slot at once.
const IDLE_INTERVAL: Duration = Duration::from_millis(500);

/// Claims per pass. A pass ends once its claims are performed, and the next
/// one waits the interval: with the runner's default of 25 a busy queue would
/// idle every 25 jobs, so a pass goes on claiming while the queue has due work.
const BATCH_LIMIT: u64 = 1_000_000;

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
    let heartbeat = if heartbeat_every.is_some() { "--heartbeat-every" } else { "the default heartbeat" };
    let input = leasehold::core::OptionsInput {
        interval_ms: 1_000.0,
        stale_after_ms: stale_after.as_millis() as f64,
        heartbeat: true,
        heartbeat_every_ms: heartbeat_every.map(|d| d.as_millis() as f64),
        abort_grace: grace.map_or(AbortGrace::Default, |g| AbortGrace::Ms(g.as_millis() as f64)),
        names: OptionNames {
            stale_after: "--stale-after",
            heartbeat_every: heartbeat,
            heartbeat_skew: "the skew allowance (half the heartbeat)",
            abort_grace: "--grace",
            unit: "ms",
        },
        ..Default::default()
    };
    let config = input.validate().map_err(|e| {
        let mut message = e.to_string();
        if heartbeat_every.is_none() && message.contains(heartbeat) {
            message.push_str(" (a third of --stale-after, at least 250ms: lengthen --stale-after, or set --heartbeat-every, at least 100ms)");
        }
        refuse(message)
    })?;
    Ok(Duration::from_millis(config.abort_grace_ms.unwrap_or_default()))
}

/// The backoff of failing claims (the database is down), for each runner
/// and the turns the idle slots take: 0.5 s doubling up to the core's
/// recovery cap (1.5 s), rather than failing every 0.5 s; the cap keeps a
/// recovered database noticed within 2 s.
fn claim_backoff() -> leasehold::core::Backoff {
    leasehold::core::recovery_backoff(IDLE_INTERVAL.as_millis() as f64)
}

/// A running pool.
pub struct Pool {
    /// One per slot (see [`Pool::start`]).
    runners: Vec<JobRunner>,
    claiming: Arc<AtomicBool>,
    hard_stop: watch::Sender<bool>,
    waker: JoinHandle<()>,
    recorder: Recorder,
    unsettled: Unsettled,
    /// The slots' counters, recorded as one worker in the workers table.
    stats: WorkerStats,
}

impl Pool {
    /// Starts working `config.queue` of `store`: one runner per slot, each
    /// performing one command at a time and claiming as soon as it is free
    /// (idle slots take turns to poll, one every [`IDLE_INTERVAL`], besides
    /// the wake-ups).
    pub async fn start(store: &Store, config: PoolConfig<'_>) -> Result<Pool, CliError> {
        let grace = check_timings(config.stale_after, config.heartbeat_every, config.grace)?;
        let (hard_stop, stopped) = watch::channel(false);
        let claiming = Arc::new(AtomicBool::new(true));
        let name = format!("leasehold.{}", config.queue);
        let recorder = Recorder::open(config.events, &name, store, config.queue).await?;
        // One runner per slot, each performing one command at a time, rather
        // than one runner with `concurrency` workers: a runner's pass stops
        // claiming for all its workers at the first claim that finds the
        // queue empty, and takes no more until its last command ends (seed
        // 000). With one long command running, the other slots would sit
        // idle however much work arrived meanwhile; separate runners each
        // claim as soon as they are free.
        let mut runners = Vec::with_capacity(config.concurrency as usize);
        let backoff = claim_backoff();
        let turns = Arc::new(Turns::new(config.concurrency as usize, backoff));
        // Idle polls come from the shared ticker below; a runner's own
        // interval is the backstop, as rare for all slots together as one
        // runner's interval.
        let backstop = IDLE_INTERVAL.saturating_mul(config.concurrency.max(1));
        // The outcomes held unsettled, shared by the slots, so no slot
        // reclaims a job whose finished command another still settles.
        let unsettled = Unsettled::new();
        let stats = WorkerStats::new();
        for slot in 1..=config.concurrency {
            let handler = CommandHandler::new(grace, stopped.clone());
            // Pages of one: a job claimed is a job started, so a drain (which
            // stops claiming) never strands claimed-but-unstarted jobs in a
            // page until their leases go stale.
            let mut inner = Worker::new(store.clone(), config.queue, handler)
                .lease(config.stale_after)
                // Job events come from the store's settlements journal.
                .page_size(1)
                .sharing(unsettled.clone())
                .sharing_stats(stats.clone());
            if let Some(metrics) = config.metrics {
                inner = inner.metrics(metrics);
            }
            let worker = Draining {
                inner,
                claiming: Arc::clone(&claiming),
                slot: slot as usize - 1,
                turns: Arc::clone(&turns),
            };
            let journal = recorder.journal.clone();
            let mut builder = JobRunner::builder(name.clone())
                .interval(backstop)
                .stale_after(config.stale_after)
                .concurrency(1)
                .batch_limit(BATCH_LIMIT)
                .backoff(backoff)
                // A stopped command gets its grace, then SIGKILL; the perform
                // is given up on then too (dropping it kills the group), so
                // the whole exit fits in the lease.
                .abort_grace(grace)
                .observe(Arc::new(SlotJournal { journal, slot }));
            if let Some(every) = config.heartbeat_every {
                builder = builder.heartbeat_every(every);
            }
            runners.push(builder.spawn(worker).map_err(|e| CliError::input(format!("invalid lease timings: {e}")))?);
        }
        let wakeups = store.listen(config.queue).await?;
        for runner in &runners {
            runner.start();
        }
        let waker = tokio::spawn({
            let runners = runners.clone();
            async move {
                let mut ticker = tokio::time::interval(IDLE_INTERVAL);
                ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        () = wakeups.notified() => {
                            // While claims fail, the wake-ups a reconnecting
                            // listener sends would have every slot fail at
                            // once: one slot probes instead.
                            if turns.may_poll(std::time::Instant::now()) {
                                for runner in &runners {
                                    runner.wake();
                                }
                                continue;
                            }
                        }
                        _ = ticker.tick() => {
                            if !turns.may_poll(std::time::Instant::now()) {
                                continue;
                            }
                        }
                        () = turns.handed_on() => {}
                    }
                    if let Some(slot) = turns.next_idle() {
                        runners[slot].wake();
                    }
                }
            }
        });
        Ok(Pool { runners, claiming, hard_stop, waker, recorder, unsettled, stats })
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
        // The pass in flight would go on claiming while work is due: stop
        // that first, then wait for what runs.
        self.claiming.store(false, Ordering::SeqCst);
        for runner in &self.runners {
            runner.stop();
        }
        {
            let quiesce = futures_util::future::join_all(self.runners.iter().map(JobRunner::quiesce));
            tokio::pin!(quiesce);
            loop {
                tokio::select! {
                    _ = &mut quiesce => break,
                    () = interrupts.next() => {
                        if !ended {
                            eprintln!("leasehold: ending the running commands");
                            ended = true;
                            self.hard_stop.send_replace(true);
                        }
                        let waiting = self.unsettled.len();
                        if waiting > 0 {
                            eprintln!(
                                "leasehold: waiting to record the outcome of {waiting} finished command(s) (the database does not answer yet)"
                            );
                        }
                    }
                }
            }
        }
        for runner in &self.runners {
            runner.dispose().await;
        }
        self.waker.abort();
        self.recorder.close().await;
        if let Err(e) = self.stats.stop().await {
            tracing::debug!("recording this worker's stop failed: {e}");
        }
        ended
    }
}

/// A job that claims nothing once `claiming` is off, so a drain ends the
/// pass in flight after the commands already started.
struct Draining<J> {
    inner: J,
    claiming: Arc<AtomicBool>,
    /// This slot's index in `turns`.
    slot: usize,
    turns: Arc<Turns>,
}

impl<J: Job> Job for Draining<J> {
    type Item = J::Item;
    const HEARTBEAT: bool = J::HEARTBEAT;

    async fn claim(&self, at: Millis) -> Result<Option<J::Item>, BoxError> {
        if !self.claiming.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let claimed = self.inner.claim(at).await;
        self.turns.claim_answered(claimed.is_ok(), std::time::Instant::now());
        if matches!(claimed, Ok(Some(_))) {
            self.turns.claimed();
        }
        claimed
    }

    async fn perform(&self, item: J::Item, signal: AbortSignal) -> Result<(), BoxError> {
        let _busy = self.turns.busy(self.slot);
        self.inner.perform(item, signal).await
    }

    async fn heartbeat(&self, item: J::Item, at: Millis) -> Result<bool, BoxError> {
        self.inner.heartbeat(item, at).await
    }

    const SETTLES: bool = J::SETTLES;

    async fn settle(&self, item: J::Item, outcome: Result<(), JobError>) -> Result<Settled, BoxError> {
        self.inner.settle(item, outcome).await
    }

    async fn release(&self, item: J::Item) -> Result<(), BoxError> {
        self.inner.release(item).await
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

/// One slot's runner feeding the process's journal: its events carry the
/// slot, which tells the passes of the slots' runners apart.
struct SlotJournal {
    journal: Arc<TraceJournal>,
    slot: u32,
}

impl Observer for SlotJournal {
    fn observe(&self, _runner: &str, event: &Event<JobError>) {
        self.journal.record_of_slot(self.slot, event);
    }
}
