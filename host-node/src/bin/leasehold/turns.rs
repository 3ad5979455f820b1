//! The idle polls of a worker's slots, shared among them.
//!
//! Each slot runs a runner of its own (see `pool`), and a runner with
//! nothing to do polls the queue on its interval: N slots would poll N times
//! as often as one. Instead, one ticker gives the poll to one idle slot at a
//! time, round robin, every idle interval; a slot that claims a job hands a
//! turn on at once, so a burst of work spreads over the idle slots without
//! waiting for the ticker; and wake-ups (an enqueue in this process, a
//! PostgreSQL `NOTIFY`) still wake every slot. The runners keep a long
//! interval of their own as a backstop. While claims fail (the database is
//! down), the ticker pauses as a runner backs off, so an outage is not
//! polled, and logged, every tick.

use leasehold::core::Backoff;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Which slots are performing a command, whose turn to poll is next, and
/// whether the database is failing.
pub struct Turns {
    busy: Vec<AtomicBool>,
    last: AtomicUsize,
    handed_on: Notify,
    /// The runners' own backoff, which the ticker follows while claims fail.
    backoff: Backoff,
    /// While claims fail: how many in a row, and until when the ticker
    /// gives no turns.
    failing: Mutex<Option<(u32, Instant)>>,
}

impl Turns {
    /// Turns among `slots` slots (indexes 0..slots), all idle, pausing after
    /// failed claims as `backoff` says.
    pub fn new(slots: usize, backoff: Backoff) -> Turns {
        Turns {
            busy: (0..slots).map(|_| AtomicBool::new(false)).collect(),
            last: AtomicUsize::new(0),
            handed_on: Notify::new(),
            backoff,
            failing: Mutex::new(None),
        }
    }

    /// A slot claimed a job: another idle slot should look for more.
    pub fn claimed(&self) {
        self.handed_on.notify_one();
    }

    /// A slot's claim answered (`ok`: found a job or nothing) or failed at
    /// `now`. While claims fail (the database is down), the ticker pauses for
    /// the backoff's delay after that many failures in a row, so an outage is
    /// not polled (and logged) every tick.
    pub fn claim_answered(&self, ok: bool, now: Instant) {
        let mut failing = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        *failing = if ok {
            None
        } else {
            let failures = failing.map_or(1, |(n, _)| n.saturating_add(1));
            Some((failures, now + Duration::from_millis(self.backoff.delay_after(failures))))
        };
    }

    /// Whether the ticker gives a turn at `now` (not while claims fail).
    pub fn may_poll(&self, now: Instant) -> bool {
        self.failing.lock().unwrap_or_else(|e| e.into_inner()).is_none_or(|(_, until)| now >= until)
    }

    /// Slot `slot` performs a command until the answer is dropped (also
    /// when the perform is given up on).
    pub fn busy(&self, slot: usize) -> Busy<'_> {
        self.busy[slot].store(true, Ordering::SeqCst);
        Busy { turns: self, slot }
    }

    /// Resolves when a slot claimed a job since the last call.
    pub async fn handed_on(&self) {
        self.handed_on.notified().await;
    }

    /// The next idle slot after the last one given a turn, round robin;
    /// `None` when every slot is busy.
    pub fn next_idle(&self) -> Option<usize> {
        let n = self.busy.len();
        let last = self.last.load(Ordering::SeqCst);
        let next = (1..=n).map(|step| (last + step) % n).find(|&slot| !self.busy[slot].load(Ordering::SeqCst))?;
        self.last.store(next, Ordering::SeqCst);
        Some(next)
    }
}

/// A slot performing a command; idle again once dropped.
pub struct Busy<'a> {
    turns: &'a Turns,
    slot: usize,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.turns.busy[self.slot].store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The core's recovery cap: a recovered database is polled again within 2 s.
    const MAX_PAUSE: Duration = Duration::from_millis(leasehold::core::backoff::RECOVERY_PROBE_MAX_MS as u64);

    #[test]
    fn failed_claims_pause_the_turns_doubling_until_one_answers() {
        let turns = Turns::new(2, leasehold::core::recovery_backoff(500.0));
        let t = Instant::now();
        assert!(turns.may_poll(t));
        turns.claim_answered(false, t);
        assert!(!turns.may_poll(t + Duration::from_millis(499)));
        assert!(turns.may_poll(t + Duration::from_millis(500)));
        turns.claim_answered(false, t);
        assert!(!turns.may_poll(t + Duration::from_millis(999)));
        for _ in 0..10 {
            turns.claim_answered(false, t);
        }
        assert!(!turns.may_poll(t + MAX_PAUSE - Duration::from_millis(1)), "capped at the recovery cap");
        assert!(turns.may_poll(t + MAX_PAUSE));
        turns.claim_answered(true, t);
        assert!(turns.may_poll(t));
    }

    #[test]
    fn turns_go_round_the_idle_slots_and_skip_busy_ones() {
        let turns = Turns::new(3, leasehold::core::recovery_backoff(500.0));
        assert_eq!([turns.next_idle(), turns.next_idle(), turns.next_idle(), turns.next_idle()], [Some(1), Some(2), Some(0), Some(1)]);
        let two = turns.busy(2);
        assert_eq!([turns.next_idle(), turns.next_idle()], [Some(0), Some(1)]);
        let (zero, one) = (turns.busy(0), turns.busy(1));
        assert_eq!(turns.next_idle(), None);
        drop(one);
        assert_eq!(turns.next_idle(), Some(1));
        drop((zero, two));
        assert_eq!(turns.next_idle(), Some(2));
    }
}
