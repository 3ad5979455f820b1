//! The tokio driver of a run's heartbeat loop: one task, one timer, and the
//! calls in flight, fed to a core [`Supervisor`].

use super::options::{HeartbeatLoopOptions, HookError};
use super::{Clock, LeaseStore};
use leasehold_core::Millis;
use leasehold_core::lease::{FenceOutcome, LeasePolicy, Notice, OwnerId, PolicyError};
use leasehold_core::supervision::{Answer, CallId, Cadence, Reconfirm, Step, SupervisionPolicy, Supervisor};
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;
use tokio::time::Instant;
use tokio::time::error::Elapsed;

/// Why a [`heartbeat_loop`] resolved: the owned work must stop now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseEnded {
    /// A renewal or the reconfirmation sent at `at` (ms since the Unix epoch)
    /// answered `outcome`, anything but [`FenceOutcome::Updated`]: another
    /// owner holds the run, or it is no longer running.
    Lost {
        /// The store's answer.
        outcome: FenceOutcome,
        /// The send time of the call that answered it.
        at: Millis,
    },
    /// The lease went `unconfirmed` (whole ms, from the last confirmed
    /// renewal's send time) and the one reconfirmation raised, timed out, or
    /// its receipt hook failed; `on_lapse` has run.
    Lapsed {
        /// How long the lease went without a confirmed renewal.
        unconfirmed: Duration,
    },
}

/// Keeps `run_id`'s lease for
/// `owner` through `store` until it is lost or lapses, and resolves then.
///
/// Race the returned future with the work the lease covers (or use
/// [`super::run_supervised`]): when it resolves, stop the work. It never
/// resolves while the lease holds.
///
/// What it does, every decision being the core [`Supervisor`]'s under
/// `policy.supervision(Cadence::AfterPulse, Reconfirm::Separate)`:
///
/// - Pulses: one `heartbeat_interval_ms` after supervision starts and after
///   each pulse completes, [`LeaseStore::heartbeat`] stamped with the clock
///   reading it was sent at.
/// - A lost fence (any outcome but `Updated`, from a renewal or the
///   reconfirmation) resolves at once with [`LeaseEnded::Lost`].
/// - A renewal that raises is tolerated; the first failure of each outage
///   (failures since the last confirmation) is logged with `tracing::warn!`.
/// - The deadline falls `write_tolerance_ms` after the **send time** of the
///   last confirmed renewal (supervision's start counts as one). There one
///   [`LeaseStore::reconfirm`] is made, bounded by one
///   `heartbeat_interval_ms`, alongside any renewal still hanging. Renewed:
///   supervision goes on, and `options.on_reconfirm(gap)` runs bounded by the
///   budget the renewal left; it failing or overrunning lapses the lease.
///   Raised, timed out, or renewed with no budget left: the lease lapses —
///   logged with `tracing::warn!`, `options.on_lapse(unconfirmed)` awaited,
///   then [`LeaseEnded::Lapsed`].
/// - A stall (the task not polled past several due instants) wakes one timer
///   once: the gap is reconfirmed and reported once.
///
/// `clock` supplies every `at` (ms since the Unix epoch); the timer sleeps on
/// tokio's clock, so under `tokio::time::pause` the loop runs in virtual time
/// with a [`super::TokioClock`]. Dropping the future abandons the calls in
/// flight.
///
/// # Errors
///
/// The policy is checked first with [`LeasePolicy::validate`]: an unsafe set
/// is refused with its [`PolicyError`] and nothing is sent. Its warnings are
/// logged with `tracing::warn!` and the loop runs.
pub fn heartbeat_loop<'a, S: LeaseStore, C: Clock>(
    store: &'a S,
    run_id: &'a str,
    owner: &'a OwnerId,
    policy: LeasePolicy,
    clock: C,
    options: HeartbeatLoopOptions,
) -> Result<impl Future<Output = LeaseEnded> + Send + 'a, PolicyError> {
    for warning in policy.validate()? {
        tracing::warn!(run_id, "{warning}");
    }
    let supervision = policy.supervision(Cadence::AfterPulse, Reconfirm::Separate);
    Ok(drive(Target { store, run_id, owner }, supervision, clock, options))
}

/// The lease being kept: whose, on which run, through which store.
struct Target<'a, S> {
    store: &'a S,
    run_id: &'a str,
    owner: &'a OwnerId,
}

/// What woke the driver. One at a time, so each answer is matched to its call.
enum Wake<E> {
    Timer,
    Pulse(Result<FenceOutcome, E>),
    Reconfirm(Result<FenceOutcome, E>),
    Receipt(Result<Result<(), HookError>, Elapsed>),
}

/// A receipt hook running under its budget.
type ReceiptInFlight = tokio::time::Timeout<Pin<Box<dyn Future<Output = Result<(), HookError>> + Send>>>;

/// A deadline further out than this re-arms the timer after it instead (the
/// supervisor ignores an early timeout), so `Instant + wait` cannot overflow.
const MAX_WAIT_MS: u64 = 86_400_000;

async fn drive<S: LeaseStore, C: Clock>(
    target: Target<'_, S>,
    policy: SupervisionPolicy,
    clock: C,
    mut options: HeartbeatLoopOptions,
) -> LeaseEnded {
    let Target { store, run_id, owner } = target;
    let start = clock.now();
    // Seed 003: the lease as it stands counts as confirmed when supervision
    // starts (the caller has just claimed or renewed it).
    let mut supervisor = Supervisor::new(policy, start, start);
    // The calls in flight live in this one future, never spawned, so a
    // reconfirmation runs while a renewal hangs and dropping the loop
    // abandons both. A call slot's type is inferred from the store call it holds.
    let mut pulse = pin!(None);
    let mut pulse_call: CallId = 0;
    let mut reconfirm = pin!(None);
    let mut reconfirm_call: CallId = 0;
    let mut receipt = pin!(None::<ReceiptInFlight>);
    let mut timer = pin!(tokio::time::sleep(Duration::ZERO));

    loop {
        // The supervisor answers `None` only once ended, and the loop returns
        // as it ends; the cap turns that into a harmless far wake.
        let deadline = supervisor.poll_timeout().unwrap_or(Millis::MAX);
        let wait = deadline.since(clock.now()).min(MAX_WAIT_MS);
        timer.as_mut().reset(Instant::now() + Duration::from_millis(wait));

        // Answers before the timer: one that arrived by the deadline counts.
        let wake = poll_fn(|cx| {
            if let Some(hook) = receipt.as_mut().as_pin_mut()
                && let Poll::Ready(done) = Future::poll(hook, cx)
            {
                return Poll::Ready(Wake::Receipt(done));
            }
            if let Some(call) = reconfirm.as_mut().as_pin_mut()
                && let Poll::Ready(answer) = Future::poll(call, cx)
            {
                return Poll::Ready(Wake::Reconfirm(answer));
            }
            if let Some(call) = pulse.as_mut().as_pin_mut()
                && let Poll::Ready(answer) = Future::poll(call, cx)
            {
                return Poll::Ready(Wake::Pulse(answer));
            }
            timer.as_mut().poll(cx).map(|()| Wake::Timer)
        })
        .await;

        let now = clock.now();
        // The answer being fed, kept for the steps it produces.
        let mut answered: Option<(Notice, Result<FenceOutcome, S::Error>)> = None;
        match wake {
            Wake::Timer => supervisor.handle_timeout(now),
            Wake::Pulse(result) => {
                pulse.set(None);
                supervisor.handle_answer(now, pulse_call, answer_of(&result));
                answered = Some((Notice::RenewalFailed, result));
            }
            Wake::Reconfirm(result) => {
                reconfirm.set(None);
                supervisor.handle_answer(now, reconfirm_call, answer_of(&result));
                answered = Some((Notice::ReconfirmFailed, result));
            }
            Wake::Receipt(done) => {
                receipt.set(None);
                match done {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => {
                        tracing::warn!(run_id, %owner, %error, "{}", Notice::ReceiptFailed.text());
                        supervisor.handle_receipt_failed(now);
                    }
                    Err(_elapsed) => {
                        tracing::warn!(run_id, %owner, "{}", Notice::ReceiptOverran.text());
                        supervisor.handle_receipt_failed(now);
                    }
                }
            }
        }

        while let Some(step) = supervisor.poll_output() {
            match step {
                Step::Renew { call, at } => {
                    pulse_call = call;
                    pulse.set(Some(store.heartbeat(run_id, owner, at)));
                }
                Step::Reconfirm { call, at } => {
                    // Replaces (abandons) an earlier reconfirm still in flight:
                    // the supervisor no longer matches its answer.
                    reconfirm_call = call;
                    reconfirm.set(Some(store.reconfirm(run_id, owner, at)));
                }
                Step::Confirmed { .. } => {}
                Step::Failed { at, first_in_outage, .. } => {
                    if let (true, Some((notice, Err(error)))) = (first_in_outage, &answered) {
                        tracing::warn!(run_id, %owner, sent_at = at.0, %error, "{}", notice.text());
                    }
                }
                Step::Reconfirmed { unconfirmed_ms, budget_ms } => {
                    if let Some(hook) = options.on_reconfirm.as_mut() {
                        let gap = Duration::from_millis(unconfirmed_ms);
                        let budget = Duration::from_millis(budget_ms);
                        receipt.set(Some(tokio::time::timeout(budget, hook(gap))));
                    }
                }
                Step::Lost { at } => {
                    let outcome = match &answered {
                        Some((_, Ok(outcome))) => *outcome,
                        // Only an answer yields `Lost`, and only a fence
                        // outcome other than `Updated` maps to `Answer::Lost`.
                        _ => FenceOutcome::LostMissing,
                    };
                    tracing::debug!(run_id, %owner, sent_at = at.0, ?outcome, "{}", Notice::Lost.text());
                    return LeaseEnded::Lost { outcome, at };
                }
                Step::Lapsed { unconfirmed_ms } => {
                    // Abandon the calls in flight: supervision has ended.
                    pulse.set(None);
                    reconfirm.set(None);
                    receipt.set(None);
                    tracing::warn!(run_id, %owner, unconfirmed_ms, "{}", Notice::Lapsed.text());
                    let unconfirmed = Duration::from_millis(unconfirmed_ms);
                    if let Some(hook) = options.on_lapse.take() {
                        hook(unconfirmed).await;
                    }
                    return LeaseEnded::Lapsed { unconfirmed };
                }
            }
        }
    }
}

/// A store answer as the supervisor reads it: updated, lost fence, or raised.
fn answer_of<E>(result: &Result<FenceOutcome, E>) -> Answer {
    match result {
        Ok(FenceOutcome::Updated) => Answer::Updated,
        Ok(_) => Answer::Lost,
        Err(_) => Answer::Failed,
    }
}
