//! The one task that drives a runner: it feeds the core what happened and
//! executes what the core asks, polling the claim, every item's perform,
//! renewal and finish (settle or release) futures itself (no spawn, sleep or
//! boxed future per item).

use super::clock::Clock;
use super::future_slot::FutureSlot;
use super::event::{JobEvent, PassReport};
use super::job::{BoxError, Job, JobError, Settled};
use super::signal::{AbortSignal, ClaimLost, SlotSignal};
use super::wakers::{bits, ReadySet};
use super::Sinks;
use futures_util::FutureExt;
use leasehold_core::runner::{Action, ItemKey, PassId, Runner, SettleAnswer, Ticket};
use leasehold_core::supervision::CallId;
use leasehold_core::Millis;
use std::future::{poll_fn, Future};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, Sleep};

/// What a handle asks of the driver.
pub(crate) enum Command {
    Start,
    Tick(oneshot::Sender<PassReport>),
    Wake,
    Stop,
    Quiesce(oneshot::Sender<()>),
    Dispose(oneshot::Sender<()>),
}

/// Turns a caught panic into an error the runner counts like a raise.
fn unwind<T>(result: std::thread::Result<Result<T, BoxError>>, what: &str) -> Result<T, JobError> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(JobError::new(error)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".into());
            Err(JobError::new(format!("{what} panicked: {message}").into()))
        }
    }
}

/// What a slot's finish future does (settle phase, see [`Job::SETTLES`]).
enum Finish {
    /// Writes the outcome the perform reached.
    Settle(Result<(), JobError>),
    /// Hands a declined claim back.
    Release,
}

/// A finish future's answer: `Some` for a settle, `None` for a release.
type Finished = std::thread::Result<Result<Option<Settled>, BoxError>>;

/// Whether a perform's error is its signal's: the work stopped without an
/// outcome to settle.
fn is_stop(outcome: &Result<(), JobError>) -> bool {
    matches!(outcome, Err(error) if error.inner().downcast_ref::<ClaimLost>().is_some())
}

/// What the driver keeps for one slot of the pool, reused item after item:
/// the item and its key, its signal, the outcome its perform reached, and
/// its three futures.
struct HostSlot<I, P, R, F> {
    key: Option<ItemKey>,
    item: Option<I>,
    signal: Arc<SlotSignal>,
    /// The outcome the perform reached, for its settles (settle phase).
    outcome: Option<Result<(), JobError>>,
    perform: FutureSlot<P>,
    renewal: FutureSlot<R>,
    /// The supervisor's call the renewal in flight answers.
    renewal_call: CallId,
    /// The settle or release of the item.
    finish: FutureSlot<F>,
}

impl<I, P: Future, R: Future, F: Future> HostSlot<I, P, R, F> {
    fn new() -> Self {
        HostSlot {
            key: None,
            item: None,
            signal: Arc::new(SlotSignal::default()),
            outcome: None,
            perform: FutureSlot::new(),
            renewal: FutureSlot::new(),
            renewal_call: 0,
            finish: FutureSlot::new(),
        }
    }
}

struct Driver<J: Job, MC, MP, MR, MF, C, P, R, F> {
    make_claim: MC,
    make_perform: MP,
    make_renew: MR,
    make_finish: MF,
    name: Arc<str>,
    clock: Arc<dyn Clock>,
    sinks: Sinks,
    core: Runner<JobError>,
    ready: ReadySet,
    claim: FutureSlot<C>,
    slots: Vec<HostSlot<J::Item, P, R, F>>,
    ticks: Vec<(PassId, oneshot::Sender<PassReport>)>,
    quiesces: Vec<(PassId, oneshot::Sender<()>)>,
    commands: mpsc::UnboundedReceiver<Command>,
    handles_gone: bool,
    sleep: Pin<Box<Sleep>>,
    armed_for: Option<Millis>,
}

/// Runs the runner until it is disposed or every handle is gone, and the pass
/// in flight has drained.
pub(crate) async fn drive<J: Job>(
    job: Arc<J>,
    core: Runner<JobError>,
    name: Arc<str>,
    clock: Arc<dyn Clock>,
    sinks: Sinks,
    commands: mpsc::UnboundedReceiver<Command>,
) {
    let job: &J = &job;
    let pool = core.config().pool_size() as usize;
    // The closures fix the future types the slots hold; panics become errors.
    let make_claim = move |at: Millis| AssertUnwindSafe(job.claim(at)).catch_unwind();
    let make_perform = move |item: J::Item, signal: AbortSignal| AssertUnwindSafe(job.perform(item, signal)).catch_unwind();
    let make_renew = move |item: J::Item, at: Millis| AssertUnwindSafe(job.heartbeat(item, at)).catch_unwind();
    let make_finish = move |item: J::Item, finish: Finish| {
        AssertUnwindSafe(async move {
            match finish {
                Finish::Settle(outcome) => job.settle(item, outcome).await.map(Some),
                Finish::Release => job.release(item).await.map(|()| None),
            }
        })
        .catch_unwind()
    };
    let mut driver = Driver::<J, _, _, _, _, _, _, _, _> {
        claim: slot_for(&make_claim),
        slots: (0..pool).map(|_| HostSlot::new()).collect(),
        make_claim,
        make_perform,
        make_renew,
        make_finish,
        name,
        clock,
        sinks,
        core,
        ready: ReadySet::new(pool),
        ticks: Vec::new(),
        quiesces: Vec::new(),
        commands,
        handles_gone: false,
        sleep: Box::pin(tokio::time::sleep_until(Instant::now())),
        armed_for: None,
    };
    poll_fn(|cx| driver.poll(cx)).await;
}

/// The claim's future slot, its type fixed by the closure that makes it.
fn slot_for<A, F: Future, M: Fn(A) -> F>(_: &M) -> FutureSlot<F> {
    FutureSlot::new()
}

impl<J, MC, MP, MR, MF, C, P, R, F> Driver<J, MC, MP, MR, MF, C, P, R, F>
where
    J: Job,
    MC: Fn(Millis) -> C,
    MP: Fn(J::Item, AbortSignal) -> P,
    MR: Fn(J::Item, Millis) -> R,
    MF: Fn(J::Item, Finish) -> F,
    C: Future<Output = std::thread::Result<Result<Option<J::Item>, BoxError>>>,
    P: Future<Output = std::thread::Result<Result<(), BoxError>>>,
    R: Future<Output = std::thread::Result<Result<bool, BoxError>>>,
    F: Future<Output = Finished>,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.ready.register(cx.waker());
        self.take_commands(cx);
        loop {
            // Everything ready now: due timers, woken futures, and whatever
            // the core asks next (new futures get their first poll at once).
            let mut progressed = self.run_timers();
            // What the timers decided (an abort, a drop) is carried out
            // before the woken work is polled: work woken together with its
            // lapse (after a freeze) must not take a step first.
            self.execute();
            progressed |= self.poll_ready();
            self.execute();
            if self.finished() {
                return Poll::Ready(());
            }
            if progressed {
                continue;
            }
            // Idle: arm the one timer the core needs, then sleep.
            if !self.poll_timer(cx) {
                return Poll::Pending;
            }
        }
    }

    /// The driver ends once nobody can ask it for anything more and nothing
    /// is left to drain.
    fn finished(&self) -> bool {
        (self.handles_gone || self.core.is_disposed())
            && self.core.pass_in_flight().is_none()
            && self.ticks.is_empty()
            && self.quiesces.is_empty()
    }

    fn take_commands(&mut self, cx: &mut Context<'_>) {
        while !self.handles_gone {
            let command = match self.commands.poll_recv(cx) {
                Poll::Ready(Some(command)) => command,
                Poll::Ready(None) => {
                    // Dropping the last handle stops the loop; the pass in
                    // flight still drains.
                    self.handles_gone = true;
                    self.core.stop();
                    return;
                }
                Poll::Pending => return,
            };
            let now = self.clock.now();
            match command {
                Command::Start => self.core.start(now),
                Command::Tick(reply) => match self.core.tick(now) {
                    Ticket::Done(report) => {
                        let _ = reply.send(report);
                    }
                    Ticket::Pass(pass) => self.ticks.push((pass, reply)),
                },
                Command::Wake => self.core.wake(now),
                Command::Stop => self.core.stop(),
                Command::Quiesce(reply) => {
                    let pass = self.core.quiesce();
                    self.wait_for(pass, reply);
                }
                Command::Dispose(reply) => {
                    let pass = self.core.dispose().or_else(|| self.core.pass_in_flight());
                    self.wait_for(pass, reply);
                }
            }
            self.execute();
        }
    }

    fn wait_for(&mut self, pass: Option<PassId>, reply: oneshot::Sender<()>) {
        match pass {
            Some(pass) => self.quiesces.push((pass, reply)),
            None => {
                let _ = reply.send(());
            }
        }
    }

    /// Runs the core's timers that are due.
    fn run_timers(&mut self) -> bool {
        let Some(deadline) = self.core.poll_timeout() else { return false };
        let now = self.clock.now();
        if deadline > now {
            return false;
        }
        self.core.handle_timeout(now);
        true
    }

    /// Arms the sleep for the core's next deadline and polls it; true when it
    /// already fired (the caller runs the timers).
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = self.core.poll_timeout() else {
            self.armed_for = None;
            return false;
        };
        if self.armed_for != Some(deadline) {
            let wait = std::time::Duration::from_millis(deadline.since(self.clock.now()));
            self.sleep.as_mut().reset(Instant::now() + wait);
            self.armed_for = Some(deadline);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            // A coarse custom clock may still read short of the deadline:
            // then the next round re-arms.
            self.armed_for = None;
            return true;
        }
        false
    }

    /// Polls the futures whose wakers fired.
    fn poll_ready(&mut self) -> bool {
        let (claim, performs, renewals, finishes) = self.ready.take();
        let mut progressed = false;
        if claim {
            progressed |= self.poll_claim();
        }
        for i in bits(performs) {
            progressed |= self.poll_perform(i);
        }
        for i in bits(renewals) {
            progressed |= self.poll_renewal(i);
        }
        for i in bits(finishes) {
            progressed |= self.poll_finish(i);
        }
        progressed
    }

    fn poll_claim(&mut self) -> bool {
        let Some(answer) = self.claim.poll(&self.ready.claim) else { return false };
        let now = self.clock.now();
        match unwind(answer, "claim") {
            Ok(Some(item)) => {
                if let Some(key) = self.core.claim_found(now) {
                    self.slots[usize::from(key.slot)].item = Some(item);
                }
            }
            Ok(None) => self.core.claim_empty(now),
            Err(error) => self.core.claim_failed(now, error),
        }
        true
    }

    fn poll_perform(&mut self, i: usize) -> bool {
        let Some(outcome) = self.slots[i].perform.poll(&self.ready.perform[i]) else { return false };
        // The work has ended: its signal no longer shows a deadline (nor
        // reads as lapsed once it passes, while the outcome settles).
        if let Some(key) = self.slots[i].key {
            self.slots[i].signal.clear_deadline(key.generation);
        }
        let outcome = unwind(outcome, "perform");
        if is_stop(&outcome) && self.run_timers() {
            // The work stopped on a signal that fired by the clock (its exit
            // deadline passed while it held the thread): the runner decides
            // the lapse first, so the item counts as lapsed, not failed (a
            // drop of this slot leaves nothing more to tell it).
            self.execute();
        }
        if J::SETTLES && !is_stop(&outcome) {
            // An outcome reached: it settles next, with the item and its
            // renewals kept until the settle ends.
            if let Some(key) = self.slots[i].key {
                self.slots[i].outcome = Some(outcome.clone());
                self.core.outcome_reached(self.clock.now(), key, outcome);
            }
            return true;
        }
        if let Some(key) = self.forget(i) {
            self.core.item_settled(self.clock.now(), key, outcome);
        }
        true
    }

    /// The item in slot `i` is done with: its renewals in flight are
    /// abandoned. Answers its key.
    fn forget(&mut self, i: usize) -> Option<ItemKey> {
        let slot = &mut self.slots[i];
        slot.item = None;
        slot.outcome = None;
        slot.renewal.clear();
        slot.finish.clear();
        slot.key.take()
    }

    /// A settle or release answered.
    fn poll_finish(&mut self, i: usize) -> bool {
        let Some(answer) = self.slots[i].finish.poll(&self.ready.finish[i]) else { return false };
        let Some(key) = self.slots[i].key else { return true };
        let now = self.clock.now();
        match unwind(answer, "settle") {
            Ok(Some(settled)) => {
                self.forget(i);
                let answer = match settled {
                    Settled::Landed => SettleAnswer::Landed,
                    Settled::FenceRefused => SettleAnswer::FenceRefused,
                };
                self.core.settle_answered(now, key, answer);
            }
            Ok(None) => {
                self.forget(i);
                self.core.release_answered(now, key, Ok(()));
            }
            // Only a settle is tried again; a release's error ends it.
            Err(error) if self.slots[i].outcome.is_some() => self.core.settle_answered(now, key, SettleAnswer::Unavailable(error)),
            Err(error) => {
                self.forget(i);
                self.core.release_answered(now, key, Err(error));
            }
        }
        true
    }

    fn poll_renewal(&mut self, i: usize) -> bool {
        let Some(outcome) = self.slots[i].renewal.poll(&self.ready.renew[i]) else { return false };
        if let Some(key) = self.slots[i].key {
            let call = self.slots[i].renewal_call;
            self.core.renewal_answered(self.clock.now(), key, call, unwind(outcome, "heartbeat"));
            self.publish_deadline(key);
        }
        true
    }

    /// Hands the item's exit deadline (the core's, on the runner clock) to
    /// its signal as an instant on tokio's clock, converted at its distance
    /// from now.
    fn publish_deadline(&self, key: ItemKey) {
        let slot = &self.slots[usize::from(key.slot)];
        if slot.outcome.is_some() {
            // Settling: the work it bounded has ended.
            return;
        }
        let Some(at) = self.core.exit_deadline(key) else { return };
        let (now, base) = (self.clock.now(), Instant::now());
        let instant = if at >= now {
            base + std::time::Duration::from_millis(at.since(now))
        } else {
            base.checked_sub(std::time::Duration::from_millis(now.since(at))).unwrap_or(base)
        };
        self.slots[usize::from(key.slot)].signal.set_deadline(key.generation, at, instant);
    }

    /// Carries out what the core asks. A new future is polled at once, so
    /// work that completes without waiting feeds the core in this same loop.
    fn execute(&mut self) {
        while let Some(action) = self.core.poll_action() {
            match action {
                Action::Claim { at } => {
                    self.claim.start((self.make_claim)(at));
                    self.poll_claim();
                }
                Action::Perform { key } => {
                    let i = usize::from(key.slot);
                    let slot = &mut self.slots[i];
                    // Without renewals or a settle nothing else needs the
                    // item: move it.
                    let item = if J::HEARTBEAT || J::SETTLES { slot.item.clone() } else { slot.item.take() };
                    let Some(item) = item else { continue };
                    let signal = AbortSignal::new(slot.signal.clone(), key.generation, self.name.clone());
                    slot.key = Some(key);
                    // The work starts with its exit deadline known.
                    self.publish_deadline(key);
                    self.slots[i].perform.start((self.make_perform)(item, signal));
                    self.poll_perform(i);
                }
                Action::Renew { key, call, at } => {
                    let i = usize::from(key.slot);
                    let slot = &mut self.slots[i];
                    let Some(item) = slot.item.clone() else { continue };
                    slot.renewal_call = call;
                    slot.renewal.start((self.make_renew)(item, at));
                    self.poll_renewal(i);
                }
                Action::Settle { key } => {
                    let i = usize::from(key.slot);
                    let slot = &mut self.slots[i];
                    let (Some(item), Some(outcome)) = (slot.item.clone(), slot.outcome.clone()) else { continue };
                    slot.finish.start((self.make_finish)(item, Finish::Settle(outcome)));
                    self.poll_finish(i);
                }
                Action::Release { key } => {
                    let i = usize::from(key.slot);
                    let slot = &mut self.slots[i];
                    let Some(item) = slot.item.clone() else { continue };
                    slot.key = Some(key);
                    slot.finish.start((self.make_finish)(item, Finish::Release));
                    self.poll_finish(i);
                }
                Action::Abort { key, lapsed } => self.slots[usize::from(key.slot)].signal.abort(key.generation, lapsed),
                Action::Drop { key } => {
                    let i = usize::from(key.slot);
                    self.slots[i].perform.clear();
                    self.forget(i);
                }
                Action::Log { kind, error } => {
                    tracing::error!(module = %self.name, err = %error, "{} {}", self.name, kind.suffix());
                }
                Action::Emit(event) => self.emit(event),
                Action::PassEnded { pass, report } => {
                    for (_, reply) in extract(&mut self.ticks, |(p, _)| *p == pass) {
                        let _ = reply.send(report);
                    }
                    for (_, reply) in extract(&mut self.quiesces, |(p, _)| *p == pass) {
                        let _ = reply.send(());
                    }
                }
            }
        }
    }

    /// Hands the event to the observers, then to the user's sink. One that
    /// panics is the observer's defect: the pass goes on.
    fn emit(&self, event: leasehold_core::Event<JobError>) {
        for observer in &self.sinks.observers {
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| observer.observe(&self.name, &event)));
        }
        let Some(sink) = &self.sinks.sink else { return };
        let event = JobEvent { name: self.name.clone(), event };
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| sink(&event)));
    }
}

/// Removes and answers the elements matching `pred`, keeping the others.
fn extract<T>(from: &mut Vec<T>, pred: impl Fn(&T) -> bool) -> Vec<T> {
    let mut taken = Vec::new();
    let mut i = 0;
    while i < from.len() {
        if pred(&from[i]) {
            taken.push(from.swap_remove(i));
        } else {
            i += 1;
        }
    }
    taken
}
