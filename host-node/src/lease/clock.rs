//! Where a heartbeat loop reads time.
//!
//! The same shape as the runner's clock (`Clock::now() -> Millis`, ms since the
//! Unix epoch); kept here until that one lands on main, so the two fold into
//! one with a `pub use`.

use leasehold_core::Millis;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// A source of instants: `now()` answers milliseconds since the Unix epoch,
/// the `at` stamped on every renewal and reconfirmation (seed 003: the loop
/// reads the Effect `Clock`, so it is driveable with a test clock).
///
/// A clock must never step backwards by much: the lease deadline is measured
/// on it. (A backwards step only shortens spans to zero, never panics.)
pub trait Clock: Send + Sync + 'static {
    /// The current instant, ms since the Unix epoch.
    fn now(&self) -> Millis;
}

/// The system time read once, advanced by tokio's monotonic clock.
///
/// Monotonic, so a wall-clock step cannot fake or hide a lapse; and under
/// `tokio::time::pause` it follows virtual time, so tests drive the loop by
/// advancing tokio's clock.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    base_ms: u64,
    base: Instant,
}

impl TokioClock {
    /// Anchored at the current system time.
    pub fn new() -> TokioClock {
        // A system clock before 1970 reads as the epoch itself.
        let base_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX));
        TokioClock::starting_at(base_ms)
    }

    /// Anchored at `base_ms` (tests: a readable epoch such as 0).
    pub fn starting_at(base_ms: u64) -> TokioClock {
        TokioClock { base_ms, base: Instant::now() }
    }
}

impl Default for TokioClock {
    fn default() -> TokioClock {
        TokioClock::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Millis {
        let elapsed = u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX);
        Millis(self.base_ms.saturating_add(elapsed))
    }
}
