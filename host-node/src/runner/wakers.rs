//! Which of the driver's futures asked to be polled again.
//!
//! One task drives a runner and all its items, so it needs to know which item
//! futures woke it without polling all of them. Each slot gets three wakers
//! (perform, renewal, and finish: the settle or release of the slot's item)
//! made once when the runner starts; waking one sets a bit
//! and wakes the driver task. Nothing is allocated per item.

use futures_util::task::AtomicWaker;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Wake, Waker};

#[derive(Default)]
struct Shared {
    claim: AtomicBool,
    perform: AtomicU64,
    renew: AtomicU64,
    finish: AtomicU64,
    driver: AtomicWaker,
}

#[derive(Clone, Copy)]
enum Kind {
    Claim,
    Perform(u8),
    Renew(u8),
    Finish(u8),
}

struct FutureWaker {
    shared: Arc<Shared>,
    kind: Kind,
}

impl Wake for FutureWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match self.kind {
            Kind::Claim => self.shared.claim.store(true, Ordering::Release),
            Kind::Perform(i) => {
                self.shared.perform.fetch_or(1 << i, Ordering::Release);
            }
            Kind::Renew(i) => {
                self.shared.renew.fetch_or(1 << i, Ordering::Release);
            }
            Kind::Finish(i) => {
                self.shared.finish.fetch_or(1 << i, Ordering::Release);
            }
        }
        self.shared.driver.wake();
    }
}

/// The ready set and the wakers that fill it (pool ≤ 64 slots).
pub(crate) struct ReadySet {
    shared: Arc<Shared>,
    pub(crate) claim: Waker,
    pub(crate) perform: Vec<Waker>,
    pub(crate) renew: Vec<Waker>,
    pub(crate) finish: Vec<Waker>,
}

impl ReadySet {
    pub(crate) fn new(pool: usize) -> Self {
        assert!(pool <= 64, "the core bounds the pool to 64");
        let shared = Arc::new(Shared::default());
        let waker = |kind| Waker::from(Arc::new(FutureWaker { shared: shared.clone(), kind }));
        ReadySet {
            claim: waker(Kind::Claim),
            perform: (0..pool as u8).map(|i| waker(Kind::Perform(i))).collect(),
            renew: (0..pool as u8).map(|i| waker(Kind::Renew(i))).collect(),
            finish: (0..pool as u8).map(|i| waker(Kind::Finish(i))).collect(),
            shared,
        }
    }

    /// Registers the driver task's waker.
    pub(crate) fn register(&self, driver: &Waker) {
        self.shared.driver.register(driver);
    }

    /// Takes the ready flags: (claim, perform bits, renewal bits, finish
    /// bits).
    pub(crate) fn take(&self) -> (bool, u64, u64, u64) {
        (
            self.shared.claim.swap(false, Ordering::Acquire),
            self.shared.perform.swap(0, Ordering::Acquire),
            self.shared.renew.swap(0, Ordering::Acquire),
            self.shared.finish.swap(0, Ordering::Acquire),
        )
    }
}

/// Iterates the set bits of `bits`, lowest first.
pub(crate) fn bits(mut bits: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            i
        })
    })
}
