//! What a pass does when its append fails: the sources stay dirty, the error is reported once (not once per
//! retry), a retry runs in the background after a second, and the pass itself
//! answers the failure to whoever waited on it.

use alloc::string::String;

/// The delay before a failed pass is retried in the background.
pub const RETRY_AFTER_MS: u64 = 1_000;

/// Remembers the failure last reported, so a log that keeps failing the same
/// way is reported once.
///
/// A pass that succeeds clears it: the next failure after a
/// recovery is a new episode and is reported again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FailureReport {
    reported: Option<String>,
}

impl FailureReport {
    /// Nothing reported yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A pass failed with `message`: answers whether to report it now (it
    /// differs from the failure reported last).
    pub fn failed(&mut self, message: &str) -> bool {
        if self.reported.as_deref() == Some(message) {
            return false;
        }
        self.reported = Some(String::from(message));
        true
    }

    /// A pass succeeded: the failure episode is over.
    pub fn recovered(&mut self) {
        self.reported = None;
    }

    /// The failure reported last, while the episode lasts.
    pub fn current(&self) -> Option<&str> {
        self.reported.as_deref()
    }
}
