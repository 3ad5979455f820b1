//! Seed 003 `heartbeatLoop` on tokio, in virtual time (`start_paused`): the
//! driver of the core supervisor against a scripted store. Policy: the seed
//! defaults (interval 2 s, write tolerance 11 s, reconfirm bound 2 s); the
//! clock starts at 0, so every `at` is ms since the loop started.

use leasehold::lease::{
    HeartbeatLoopOptions, LeaseEnded, LeaseStore, Supervised, TokioClock, heartbeat_loop, run_supervised,
};
use leasehold_core::Millis;
use leasehold_core::lease::{FenceOutcome, LeasePolicy, OwnerId, PolicyError};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tracing_subscriber::fmt::MakeWriter;

const POLICY: LeasePolicy = LeasePolicy::DEFAULT;

#[derive(Debug)]
struct Unavailable;

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("store unavailable")
    }
}

impl std::error::Error for Unavailable {}

/// How the scripted store answers one call.
#[derive(Clone, Copy, Debug)]
enum Reply {
    /// Answers `Ok(outcome)` (or raises, `None`) after `ms` of virtual time.
    After(u64, Option<FenceOutcome>),
    /// Never answers.
    Hang,
}

const UPDATED: Reply = Reply::After(0, Some(FenceOutcome::Updated));
const RAISES: Reply = Reply::After(0, None);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Heartbeat,
    Reconfirm,
}

/// A store that answers from a script (an empty script answers `Updated` at
/// once) and records every call with its `at` and how many heartbeat writes
/// were still in flight when it was made.
#[derive(Default)]
struct ScriptedStore {
    heartbeats: Mutex<VecDeque<Reply>>,
    reconfirms: Mutex<VecDeque<Reply>>,
    calls: Mutex<Vec<(Kind, u64, usize)>>,
    heartbeats_in_flight: Arc<AtomicUsize>,
}

impl ScriptedStore {
    fn new(heartbeats: &[Reply], reconfirms: &[Reply]) -> ScriptedStore {
        ScriptedStore {
            heartbeats: Mutex::new(heartbeats.iter().copied().collect()),
            reconfirms: Mutex::new(reconfirms.iter().copied().collect()),
            ..ScriptedStore::default()
        }
    }

    fn sent(&self, kind: Kind) -> Vec<u64> {
        self.calls.lock().unwrap().iter().filter(|c| c.0 == kind).map(|c| c.1).collect()
    }

    fn call(&self, kind: Kind, at: Millis) -> impl Future<Output = Result<FenceOutcome, Unavailable>> + Send + use<> {
        let queue = if kind == Kind::Heartbeat { &self.heartbeats } else { &self.reconfirms };
        let reply = queue.lock().unwrap().pop_front().unwrap_or(UPDATED);
        let in_flight = self.heartbeats_in_flight.load(Ordering::SeqCst);
        self.calls.lock().unwrap().push((kind, at.0, in_flight));
        let guard = (kind == Kind::Heartbeat).then(|| InFlight::enter(&self.heartbeats_in_flight));
        async move {
            let _guard = guard;
            match reply {
                Reply::After(ms, answer) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    answer.ok_or(Unavailable)
                }
                Reply::Hang => std::future::pending().await,
            }
        }
    }
}

/// Counts a heartbeat write as in flight until its future completes or is dropped.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(count: &Arc<AtomicUsize>) -> InFlight {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(count))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl LeaseStore for ScriptedStore {
    type Error = Unavailable;

    fn heartbeat(&self, run_id: &str, owner: &OwnerId, at: Millis) -> impl Future<Output = Result<FenceOutcome, Unavailable>> + Send {
        assert_eq!((run_id, owner), ("run-1", &owner_id()));
        self.call(Kind::Heartbeat, at)
    }

    fn reconfirm(&self, run_id: &str, owner: &OwnerId, at: Millis) -> impl Future<Output = Result<FenceOutcome, Unavailable>> + Send {
        assert_eq!((run_id, owner), ("run-1", &owner_id()));
        self.call(Kind::Reconfirm, at)
    }
}

fn owner_id() -> OwnerId {
    OwnerId::new("host-a", 4242, "incarnation-1")
}

/// What the hooks were called with, and in which order relative to the work.
#[derive(Clone, Default)]
struct Journal(Arc<Mutex<Vec<String>>>);

impl Journal {
    fn push(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }
    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Hooks that journal `reconfirm <ms>` and `lapse <ms>`; the receipt answers
/// as `receipt` says.
fn journaling_hooks(journal: &Journal, receipt: Reply) -> HeartbeatLoopOptions {
    let on_reconfirm = journal.clone();
    let on_lapse = journal.clone();
    HeartbeatLoopOptions::default()
        .on_reconfirm(move |gap| {
            on_reconfirm.push(format!("reconfirm {}", gap.as_millis()));
            async move {
                match receipt {
                    Reply::After(ms, answer) => {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        answer.map(|_| ()).ok_or_else(|| "receipt table unavailable".into())
                    }
                    Reply::Hang => std::future::pending().await,
                }
            }
        })
        .on_lapse(move |gap| {
            on_lapse.push(format!("lapse {}", gap.as_millis()));
            async {}
        })
}

/// Runs the loop to its end; answers how it ended and when (virtual ms).
async fn run(store: &ScriptedStore, options: HeartbeatLoopOptions) -> (LeaseEnded, u128) {
    let started = Instant::now();
    let owner = owner_id();
    let lease = heartbeat_loop(store, "run-1", &owner, POLICY, TokioClock::starting_at(0), options).expect("default policy");
    let ended = bounded(lease).await;
    (ended, started.elapsed().as_millis())
}

/// Fails a test whose loop is still running after a virtual hour, instead of
/// spinning forever in paused time.
async fn bounded<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(3_600), future).await.expect("ended within a virtual hour")
}

fn lost(outcome: FenceOutcome, at: u64) -> LeaseEnded {
    LeaseEnded::Lost { outcome, at: Millis(at) }
}

fn lapsed(ms: u64) -> LeaseEnded {
    LeaseEnded::Lapsed { unconfirmed: Duration::from_millis(ms) }
}

/// Captures WARN and above emitted on this thread (the paused runtime is
/// current-thread, so the loop's events land here) into a buffer.
///
/// Why one global subscriber and not `set_default` per test: tracing caches
/// each callsite's interest process-wide, computed on whichever thread hits it
/// first. A sibling test with no subscriber would cache "never" and this
/// test's capture would see nothing (a flake seen in CI). With a global
/// subscriber every thread agrees; the writer picks the buffer per thread.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Logs>> = const { std::cell::RefCell::new(None) };
}

/// Writes to the current thread's capture buffer, or nowhere.
struct ThreadCapture;

impl std::io::Write for ThreadCapture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|capture| {
            if let Some(logs) = capture.borrow().as_ref() {
                logs.0.lock().unwrap().extend_from_slice(bytes);
            }
        });
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for ThreadCapture {
    type Writer = ThreadCapture;
    fn make_writer(&'a self) -> ThreadCapture {
        ThreadCapture
    }
}

/// Stops this thread's capture when dropped.
struct CaptureGuard;

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        CAPTURE.with(|capture| capture.borrow_mut().take());
    }
}

impl Logs {
    fn capture() -> (Logs, CaptureGuard) {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            let subscriber = tracing_subscriber::fmt()
                .with_writer(ThreadCapture)
                .with_max_level(tracing::Level::WARN)
                .finish();
            tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in this test binary");
        });
        let logs = Logs::default();
        CAPTURE.with(|capture| *capture.borrow_mut() = Some(logs.clone()));
        (logs, CaptureGuard)
    }
    fn count(&self, message: &str) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap()).matches(message).count()
    }
}

#[tokio::test(start_paused = true)]
async fn pulses_renew_one_interval_after_the_previous_pulse_completed() {
    let slow = Reply::After(100, Some(FenceOutcome::Updated));
    let store = ScriptedStore::new(&[slow, slow, slow, Reply::After(0, Some(FenceOutcome::LostToNewerToken))], &[]);
    let (ended, elapsed) = run(&store, HeartbeatLoopOptions::default()).await;
    assert_eq!(store.sent(Kind::Heartbeat), vec![2_000, 4_100, 6_200, 8_300]);
    assert_eq!(store.sent(Kind::Reconfirm), Vec::<u64>::new());
    assert_eq!((ended, elapsed), (lost(FenceOutcome::LostToNewerToken, 8_300), 8_300));
}

#[tokio::test(start_paused = true)]
async fn a_lost_fence_ends_the_loop_at_once_and_calls_no_lapse_hook() {
    let journal = Journal::default();
    let store = ScriptedStore::new(&[UPDATED, Reply::After(30, Some(FenceOutcome::LostNotRunning))], &[]);
    let (ended, elapsed) = run(&store, journaling_hooks(&journal, UPDATED)).await;
    assert_eq!((ended, elapsed), (lost(FenceOutcome::LostNotRunning, 4_000), 4_030), "ends when the answer arrives");
    assert_eq!(journal.entries(), Vec::<String>::new());
}

#[tokio::test(start_paused = true)]
async fn a_reconfirmation_answering_a_lost_fence_ends_the_loop_without_lapse() {
    let journal = Journal::default();
    let store = ScriptedStore::new(&[Reply::Hang], &[Reply::After(0, Some(FenceOutcome::LostMissing))]);
    let (ended, elapsed) = run(&store, journaling_hooks(&journal, UPDATED)).await;
    assert_eq!((ended, elapsed), (lost(FenceOutcome::LostMissing, 11_000), 11_000));
    assert_eq!(journal.entries(), Vec::<String>::new());
}

#[tokio::test(start_paused = true)]
async fn failing_writes_are_tolerated_and_warned_once_per_outage() {
    let (logs, _guard) = Logs::capture();
    let store = ScriptedStore::new(
        &[RAISES, RAISES, UPDATED, RAISES, RAISES, RAISES, Reply::After(0, Some(FenceOutcome::LostToNewerToken))],
        &[],
    );
    let (ended, _) = run(&store, HeartbeatLoopOptions::default()).await;
    // Two outages (2000-4000, 8000-12000) under the 11 s tolerance: no
    // reconfirmation, no lapse, one warning each.
    assert_eq!(store.sent(Kind::Heartbeat), vec![2_000, 4_000, 6_000, 8_000, 10_000, 12_000, 14_000]);
    assert_eq!(store.sent(Kind::Reconfirm), Vec::<u64>::new());
    assert_eq!(ended, lost(FenceOutcome::LostToNewerToken, 14_000));
    assert_eq!(logs.count("run heartbeat write failed"), 2);
    assert_eq!(logs.count("store unavailable"), 2, "the warning carries the store's error");
    assert_eq!(logs.count("lapsed"), 0);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_runs_from_the_send_time_of_the_last_confirmed_renewal() {
    // Sent at 2000, confirmed at 9000: the deadline is 2000 + 11000, not
    // 9000 + 11000. The next pulse (11000) hangs.
    let store = ScriptedStore::new(
        &[Reply::After(7_000, Some(FenceOutcome::Updated)), Reply::Hang],
        &[Reply::After(0, Some(FenceOutcome::LostToNewerToken))],
    );
    let (ended, _) = run(&store, HeartbeatLoopOptions::default()).await;
    assert_eq!(store.sent(Kind::Heartbeat), vec![2_000, 11_000]);
    assert_eq!(store.sent(Kind::Reconfirm), vec![13_000]);
    assert_eq!(ended, lost(FenceOutcome::LostToNewerToken, 13_000));
}

#[tokio::test(start_paused = true)]
async fn at_the_deadline_one_reconfirmation_is_made_bounded_by_one_interval() {
    let journal = Journal::default();
    let store = ScriptedStore::new(&[Reply::Hang], &[Reply::Hang]);
    let (ended, elapsed) = run(&store, journaling_hooks(&journal, UPDATED)).await;
    assert_eq!(store.sent(Kind::Reconfirm), vec![11_000], "one reconfirmation, at the deadline");
    assert_eq!((ended, elapsed), (lapsed(13_000), 13_000), "timed out one interval later");
    assert_eq!(journal.entries(), vec!["lapse 13000"]);
}

#[tokio::test(start_paused = true)]
async fn a_renewed_reconfirmation_goes_on_and_calls_on_reconfirm_with_the_gap() {
    let journal = Journal::default();
    // The pulse sent at 2000 fails only at 12000; the reconfirmation at 11000
    // renews at 11500; pulses then resume and renew until a lost fence.
    let store = ScriptedStore::new(
        &[Reply::After(10_000, None), UPDATED, UPDATED, Reply::After(0, Some(FenceOutcome::LostToNewerToken))],
        &[Reply::After(500, Some(FenceOutcome::Updated))],
    );
    let (ended, _) = run(&store, journaling_hooks(&journal, UPDATED)).await;
    assert_eq!(store.sent(Kind::Reconfirm), vec![11_000]);
    assert_eq!(store.sent(Kind::Heartbeat), vec![2_000, 14_000, 16_000, 18_000]);
    assert_eq!(ended, lost(FenceOutcome::LostToNewerToken, 18_000));
    assert_eq!(journal.entries(), vec!["reconfirm 11000"], "no lapse");
}

#[tokio::test(start_paused = true)]
async fn a_reconfirmation_runs_while_a_heartbeat_write_hangs() {
    let journal = Journal::default();
    let store = ScriptedStore::new(
        &[Reply::Hang],
        &[UPDATED, Reply::After(0, Some(FenceOutcome::LostToNewerToken))],
    );
    let (ended, _) = run(&store, journaling_hooks(&journal, UPDATED)).await;
    let calls = store.calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        vec![(Kind::Heartbeat, 2_000, 0), (Kind::Reconfirm, 11_000, 1), (Kind::Reconfirm, 22_000, 1)],
        "each reconfirmation was sent with the 2000 heartbeat still in flight"
    );
    assert_eq!(journal.entries(), vec!["reconfirm 11000"]);
    assert_eq!(ended, lost(FenceOutcome::LostToNewerToken, 22_000));
    assert_eq!(store.heartbeats_in_flight.load(Ordering::SeqCst), 0, "the hanging write is abandoned when the loop ends");
}

#[tokio::test(start_paused = true)]
async fn on_reconfirm_is_bounded_by_the_remaining_budget_and_a_hanging_hook_lapses() {
    let journal = Journal::default();
    // The pulse sent at 2000 fails at 11500; the reconfirmation sent at 11000
    // renews at 11100, leaving 11000 + 11000 - 11100 = 10900 ms of budget for
    // the receipt, which hangs. Pulses renew meanwhile (13500 .. 21500): a
    // receipt that never completes still lapses the lease at 22000.
    let store = ScriptedStore::new(&[Reply::After(9_500, None)], &[Reply::After(100, Some(FenceOutcome::Updated))]);
    let (ended, elapsed) = run(&store, journaling_hooks(&journal, Reply::Hang)).await;
    assert_eq!(elapsed, 22_000);
    assert_eq!(store.sent(Kind::Heartbeat), vec![2_000, 13_500, 15_500, 17_500, 19_500, 21_500]);
    assert_eq!(ended, lapsed(500), "unconfirmed since the last renewal, sent at 21500");
    assert_eq!(journal.entries(), vec!["reconfirm 11000", "lapse 500"]);
}

#[tokio::test(start_paused = true)]
async fn an_on_reconfirm_hook_that_raises_lapses_the_lease() {
    let (logs, _guard) = Logs::capture();
    let journal = Journal::default();
    let store = ScriptedStore::new(&[Reply::Hang], &[Reply::After(100, Some(FenceOutcome::Updated))]);
    let (ended, elapsed) = run(&store, journaling_hooks(&journal, Reply::After(50, None))).await;
    assert_eq!((ended, elapsed), (lapsed(150), 11_150), "lapsed as the receipt failed, 150 ms after the renewal sent at 11000");
    assert_eq!(journal.entries(), vec!["reconfirm 11000", "lapse 150"]);
    assert_eq!(logs.count("receipt table unavailable"), 1);
}

#[tokio::test(start_paused = true)]
async fn a_reconfirmation_that_raises_calls_on_lapse_then_interrupts_the_work() {
    let (logs, _guard) = Logs::capture();
    let journal = Journal::default();
    let store = ScriptedStore::new(&[Reply::Hang], &[Reply::After(40, None)]);
    let owner = owner_id();
    let work = WorkUntilDropped::new(&journal);
    let supervised = run_supervised(work.run(), &store, "run-1", &owner, POLICY, TokioClock::starting_at(0), journaling_hooks(&journal, UPDATED));
    let result = bounded(supervised).await.expect("default policy");
    assert_eq!(result, Supervised::Ended(lapsed(11_040)));
    assert_eq!(journal.entries(), vec!["lapse 11040", "work dropped"], "the lapse hook runs before the work is interrupted");
    assert_eq!(logs.count("run lease reconfirm failed"), 1);
    assert_eq!(logs.count("run lease lapsed"), 1);
}

#[tokio::test(start_paused = true)]
async fn a_stall_past_both_timers_reconfirms_and_reports_the_gap_once() {
    let journal = Journal::default();
    let store = ScriptedStore::new(&[UPDATED, Reply::After(0, Some(FenceOutcome::LostToNewerToken))], &[UPDATED]);
    let owner = owner_id();
    let lease = heartbeat_loop(&store, "run-1", &owner, POLICY, TokioClock::starting_at(0), journaling_hooks(&journal, UPDATED))
        .expect("default policy");
    // The loop arms its timer (first pulse at 2000), then the process stalls
    // for 30 s: the pulse (2000) and the deadline (11000) are both overdue
    // when it runs again.
    let (ended, ()) = tokio::join!(bounded(lease), async {
        tokio::time::advance(Duration::from_secs(30)).await;
    });
    assert_eq!(store.sent(Kind::Reconfirm), vec![30_000], "one reconfirmation for the gap");
    assert_eq!(journal.entries(), vec!["reconfirm 30000"], "the gap is reported once");
    assert_eq!(store.sent(Kind::Heartbeat), vec![30_000, 32_000], "pulses resume after the reconfirmation decided");
    assert_eq!(ended, lost(FenceOutcome::LostToNewerToken, 32_000));
}

#[tokio::test(start_paused = true)]
async fn run_supervised_interrupts_the_owned_work_on_a_lost_fence() {
    let journal = Journal::default();
    let store = ScriptedStore::new(&[UPDATED, Reply::After(0, Some(FenceOutcome::LostToNewerToken))], &[]);
    let owner = owner_id();
    let started = Instant::now();
    let work = WorkUntilDropped::new(&journal);
    let supervised = run_supervised(work.run(), &store, "run-1", &owner, POLICY, TokioClock::starting_at(0), journaling_hooks(&journal, UPDATED));
    let result = bounded(supervised).await.expect("default policy");
    assert_eq!(result, Supervised::Ended(lost(FenceOutcome::LostToNewerToken, 4_000)));
    assert_eq!(started.elapsed().as_millis(), 4_000);
    assert_eq!(journal.entries(), vec!["work dropped"], "no lapse hook on a lost fence");
}

#[tokio::test(start_paused = true)]
async fn run_supervised_answers_the_work_output_and_stops_heartbeats_when_work_finishes() {
    let store = ScriptedStore::new(&[], &[]);
    let owner = owner_id();
    let work = async {
        tokio::time::sleep(Duration::from_millis(5_000)).await;
        "report"
    };
    let result = run_supervised(work, &store, "run-1", &owner, POLICY, TokioClock::starting_at(0), HeartbeatLoopOptions::default())
        .await
        .expect("default policy");
    assert_eq!(result, Supervised::Finished("report"));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(store.sent(Kind::Heartbeat), vec![2_000, 4_000], "no pulse after the work finished");
}

#[tokio::test(start_paused = true)]
async fn an_unsafe_policy_is_refused_before_any_call() {
    let store = ScriptedStore::new(&[], &[]);
    let owner = owner_id();
    let policy = LeasePolicy { heartbeat_interval_ms: 0, ..POLICY };
    let refused = heartbeat_loop(&store, "run-1", &owner, policy, TokioClock::starting_at(0), HeartbeatLoopOptions::default()).err();
    assert_eq!(refused, Some(PolicyError::NotPositive { field: "heartbeat_interval_ms" }));
    let unsafe_set = LeasePolicy { write_tolerance_ms: 12_000, ..POLICY };
    let refused = run_supervised(async {}, &store, "run-1", &owner, unsafe_set, TokioClock::starting_at(0), HeartbeatLoopOptions::default()).await;
    assert!(matches!(refused, Err(PolicyError::LapseNotBeforeSteal { .. })), "{refused:?}");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(store.calls.lock().unwrap().is_empty());
}

/// Owned work that never finishes by itself and journals when it is dropped.
struct WorkUntilDropped(Journal);

impl WorkUntilDropped {
    fn new(journal: &Journal) -> WorkUntilDropped {
        WorkUntilDropped(journal.clone())
    }
    async fn run(self) {
        let _held = self;
        std::future::pending::<()>().await;
    }
}

impl Drop for WorkUntilDropped {
    fn drop(&mut self) {
        self.0.push("work dropped".to_owned());
    }
}
