//! Time as the core sees it: whole milliseconds passed in by the host.

use core::fmt;
use core::ops::{Add, Sub};

/// An instant: whole milliseconds since an epoch the host picks (the native
/// host uses the Unix epoch; a JS host uses whatever `now()` answers).
///
/// The core never reads a clock. Fractional readings from JS are truncated by
/// the host before they reach the core. Arithmetic saturates: a clock that
/// steps backwards yields zero-length spans, never a panic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    /// The epoch itself.
    pub const ZERO: Millis = Millis(0);
    /// The latest instant; used as "never".
    pub const MAX: Millis = Millis(u64::MAX);

    /// Milliseconds from `earlier` to `self`, zero when `earlier` is later.
    #[must_use]
    pub fn since(self, earlier: Millis) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `self` plus `ms` milliseconds, saturating at [`Millis::MAX`].
    #[must_use]
    pub fn after(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }
}

impl Add<u64> for Millis {
    type Output = Millis;
    fn add(self, ms: u64) -> Millis {
        self.after(ms)
    }
}

impl Sub<Millis> for Millis {
    type Output = u64;
    fn sub(self, earlier: Millis) -> u64 {
        self.since(earlier)
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}
