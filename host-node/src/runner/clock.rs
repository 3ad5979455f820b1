//! The runner's clock: milliseconds since the Unix epoch.

use leasehold_core::Millis;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// Where a runner reads time. `now()` is in ms since the Unix epoch (the
/// `at` of claims, renewals and events).
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Millis;
}

/// The default clock: the system time read once at creation, advanced by
/// tokio's monotonic clock. It never steps backwards, and under
/// `tokio::time::pause` it follows virtual time, so tests drive it by
/// advancing tokio's clock.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    base_ms: u64,
    base: Instant,
}

impl TokioClock {
    /// Anchors the clock at the current system time.
    pub fn new() -> Self {
        let base_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        TokioClock { base_ms, base: Instant::now() }
    }

    /// Anchors the clock at `base_ms` (tests: a fixed, readable epoch).
    pub fn starting_at(base_ms: u64) -> Self {
        TokioClock { base_ms, base: Instant::now() }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Millis {
        Millis(self.base_ms + self.base.elapsed().as_millis() as u64)
    }
}
