//! The hooks a heartbeat loop calls.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// Why a receipt hook failed.
pub type HookError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A boxed [`HeartbeatLoopOptions::on_reconfirm`] hook: called with the gap
/// the lease went unconfirmed (whole ms), answers whether the receipt was
/// recorded.
pub type ReceiptHook =
    Box<dyn FnMut(Duration) -> Pin<Box<dyn Future<Output = Result<(), HookError>> + Send>> + Send>;

/// A boxed [`HeartbeatLoopOptions::on_lapse`] hook: called once with how long
/// the lease went unconfirmed (whole ms).
pub type LapseHook = Box<dyn FnOnce(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// What a [`super::heartbeat_loop`] caller may hook into. Both are optional; `Default` has neither.
///
/// Build with the methods of the same names, which box a closure returning a
/// future:
///
/// ```
/// use leasehold::lease::HeartbeatLoopOptions;
///
/// let options = HeartbeatLoopOptions::default()
///     .on_reconfirm(|gap| async move {
///         tracing::info!(gap_ms = gap.as_millis() as u64, "lease reconfirmed after a gap");
///         Ok(())
///     })
///     .on_lapse(|gap| async move {
///         tracing::error!(gap_ms = gap.as_millis() as u64, "lease lapsed; stopping the run");
///     });
/// # drop(options);
/// ```
#[derive(Default)]
pub struct HeartbeatLoopOptions {
    /// After a reconfirmation at the
    /// write-tolerance deadline renewed the lease, records the gap it closed
    /// (from the last confirmed renewal's send time to the deadline's
    /// handling). Bounded by the lease budget left after the renewal: a hook
    /// that raises or is still running when that budget is spent lapses the
    /// lease (a blocked receipt must not strand supervision). Supervision
    /// keeps pulsing while it runs.
    pub on_reconfirm: Option<ReceiptHook>,
    /// When the lease lapsed (the
    /// reconfirmation raised, timed out, or its receipt failed), called once
    /// with how long the lease went unconfirmed, before the loop resolves —
    /// so the caller can record why its work stopped. Not called on a lost
    /// fence. The owned work keeps running until it returns: keep it short.
    pub on_lapse: Option<LapseHook>,
}

impl HeartbeatLoopOptions {
    /// Sets [`HeartbeatLoopOptions::on_reconfirm`].
    #[must_use]
    pub fn on_reconfirm<F, Fut>(mut self, mut hook: F) -> HeartbeatLoopOptions
    where
        F: FnMut(Duration) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), HookError>> + Send + 'static,
    {
        self.on_reconfirm = Some(Box::new(move |gap| Box::pin(hook(gap))));
        self
    }

    /// Sets [`HeartbeatLoopOptions::on_lapse`].
    #[must_use]
    pub fn on_lapse<F, Fut>(mut self, hook: F) -> HeartbeatLoopOptions
    where
        F: FnOnce(Duration) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.on_lapse = Some(Box::new(move |gap| Box::pin(hook(gap))));
        self
    }
}

impl fmt::Debug for HeartbeatLoopOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeartbeatLoopOptions")
            .field("on_reconfirm", &self.on_reconfirm.is_some())
            .field("on_lapse", &self.on_lapse.is_some())
            .finish()
    }
}
