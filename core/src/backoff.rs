//! Backoff after passes that raised (`job_backoff` and the runner's
//! `delay()`).

/// Exponential backoff: the delay after `k`
/// consecutive raising passes is
/// `min(max_ms, initial_ms × max(1, multiplier)^(min(k − 1, 30)))`.
///
/// Fields are milliseconds except `multiplier` (a plain factor, may be
/// fractional). Build one with [`job_backoff`] or by hand; the runner validates
/// it (finite, not negative) when it is given in options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// Delay after the first raising pass, in ms.
    pub initial_ms: f64,
    /// Ceiling of the delay, in ms.
    pub max_ms: f64,
    /// Growth per further raising pass; values under 1 count as 1.
    pub multiplier: f64,
}

/// The cap on doublings: from the 31st raising pass in a row on, the delay
/// grows no more. It also bounds the failure counter, so a loop
/// failing for a week computes the same delay as one failing for an hour.
pub const MAX_BACKOFF_DOUBLINGS: u32 = 30;

/// The longest delay a timer is asked for, in ms: `2^31 − 1`, the ceiling of
/// JS `setTimeout` (past it Node fires after 1 ms). Longer delays are clamped
/// to it, and `nextDelayMs` reports the clamped value.
pub const MAX_DELAY_MS: u64 = 2_147_483_647;

/// Start at the interval, double, and stop at
/// ten times the interval but never past a minute, unless the interval itself
/// is longer (`max = max(interval, min(60000, interval × 10))`).
#[must_use]
pub fn job_backoff(interval_ms: f64) -> Backoff {
    Backoff {
        initial_ms: interval_ms,
        max_ms: f64::max(interval_ms, f64::min(60_000.0, interval_ms * 10.0)),
        multiplier: 2.0,
    }
}

impl Backoff {
    /// The delay in whole ms (truncated) after `failures` consecutive raising
    /// passes (`failures ≥ 1`), before clamping to [`MAX_DELAY_MS`].
    ///
    /// Computed by repeated multiplication, capped at `max_ms` as soon as it
    /// reaches it: no `powf`, so it works without std and cannot overflow.
    #[must_use]
    pub fn delay_after(&self, failures: u32) -> u64 {
        let doublings = failures.saturating_sub(1).min(MAX_BACKOFF_DOUBLINGS);
        let factor = f64::max(1.0, self.multiplier);
        let mut delay = self.initial_ms;
        for _ in 0..doublings {
            if delay >= self.max_ms {
                break;
            }
            delay *= factor;
        }
        let delay = f64::min(self.max_ms, delay);
        // `as` saturates: NaN is refused at validation, infinities clamp.
        delay as u64
    }
}

impl Backoff {
    /// Every delay this backoff takes, in whole ms: element `k − 1` is
    /// [`Backoff::delay_after`]`(k)`, from `k = 1` up to the first delay that
    /// reaches `max_ms` (or the last one the doubling cap lets grow); every
    /// later failure waits as long as the last element. Never empty; at most
    /// [`MAX_BACKOFF_DOUBLINGS`]` + 1` elements.
    ///
    /// What a store binds into its fail statement, which picks the element
    /// for the attempt number it reads off the job in the same statement:
    /// the store computes no delay of its own.
    #[must_use]
    pub fn delays(&self) -> alloc::vec::Vec<u64> {
        let mut delays = alloc::vec::Vec::new();
        for failures in 1..=MAX_BACKOFF_DOUBLINGS + 1 {
            let delay = self.delay_after(failures);
            delays.push(delay);
            if delay as f64 >= self.max_ms || delays.len() > 1 && delays[delays.len() - 2] == delay {
                break;
            }
        }
        delays
    }
}

/// The longest a host waits, in ms, before it tries a store that stopped
/// answering again: a worker notices a recovered database (a restarted
/// server, a released lock) at most this long after it answers, plus one
/// try. Waiting longer saves next to nothing (one failed connect or query a
/// second per worker costs the server little) and holds every queued job up
/// for as long.
pub const RECOVERY_PROBE_MAX_MS: f64 = 1_500.0;
// The promise above is "within 2 s": the cap plus one try must fit.
const _: () = assert!(RECOVERY_PROBE_MAX_MS < 2_000.0);

/// The backoff while a store does not answer (reconnects, failing claims):
/// starts at `first_ms` (ms; capped too), doubles, and never waits more than
/// [`RECOVERY_PROBE_MAX_MS`].
#[must_use]
pub fn recovery_backoff(first_ms: f64) -> Backoff {
    Backoff { initial_ms: f64::min(first_ms, RECOVERY_PROBE_MAX_MS), max_ms: RECOVERY_PROBE_MAX_MS, multiplier: 2.0 }
}

/// The retry backoff of a job queue's failed attempts where the queue sets none: attempt
/// `k` (from 1) that fails is queued again `delay_after(k)` ms later, 1 s doubling up to
/// 1 h. Every store uses it (the native SQL stores, the npm package's IndexedDB store).
pub const RETRY_BACKOFF: Backoff = Backoff { initial_ms: 1_000.0, max_ms: 3_600_000.0, multiplier: 2.0 };

/// The claims a job may have in all where its enqueue sets no budget (as graphile-worker
/// and Sidekiq): a fail on the last one, or a lease lost on it, dead-letters the job.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 25;
