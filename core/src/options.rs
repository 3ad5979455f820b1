//! Runner options: the reference implementation's defaults and normalisation, plus the checks we
//! add so bad input gets an error naming the option instead of a hot loop.
//!
//! Numbers come in as `f64`, the way a JS caller hands them over; the native
//! host converts its `Duration`s. Whole milliseconds are kept: fractional
//! durations and counts are truncated (documented behaviour).

use crate::backoff::Backoff;
use core::fmt;

/// Claim attempts one pass may make.
pub const DEFAULT_JOB_BATCH_LIMIT: u32 = 25;
/// The ceiling on items performed at once.
pub const MAX_JOB_CONCURRENCY: u32 = 64;
/// The default cadence never goes under this.
pub const MIN_HEARTBEAT_MS: u64 = 250;
/// The default cadence is a third of the stale
/// window, so two renewals fit in it.
pub const HEARTBEAT_DIVISOR: u64 = 3;

/// Runner options as a caller gives them.
///
/// All spans are milliseconds. `None` means "not given" (JS `undefined`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OptionsInput {
    /// `intervalMs`: delay between passes. Finite, not negative; at least 1.
    pub interval_ms: f64,
    /// `staleAfterMs`: how long a claim survives without a renewal. Finite,
    /// not negative.
    pub stale_after_ms: f64,
    /// Whether a `heartbeat` callback was given.
    pub heartbeat: bool,
    /// `heartbeatEveryMs`: renewal cadence; default `max(250, ⌊stale/3⌋)`,
    /// at least 1. With a heartbeat it must be under half of `staleAfterMs`.
    pub heartbeat_every_ms: Option<f64>,
    /// `heartbeatSkewMs` (ours): the skew allowance `K` of supervised
    /// renewals; default `⌊heartbeatEveryMs / 2⌋`.
    pub heartbeat_skew_ms: Option<f64>,
    /// `backoff`: absent means a raising pass waits `intervalMs`.
    pub backoff: Option<Backoff>,
    /// `batchLimit`: claim attempts per pass; default 25, at least 1.
    pub batch_limit: Option<f64>,
    /// `concurrency`: items performed at once. As the reference implementation codes it:
    /// truncated; not a safe integer means 1; clamped to 1..=64.
    pub concurrency: Option<f64>,
    /// Native host only: how long an aborted `perform` may run on before the
    /// host drops it (counted `claimLost`). `None`: never dropped (JS).
    pub abort_grace_ms: Option<f64>,
}

/// Which option was wrong and why. Display gives one line naming the option
/// with its JS name, e.g. `intervalMs must be a finite number, got NaN`.
#[allow(missing_docs)] // each variant's doc names its fields and units
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum OptionError {
    /// A span or count that is NaN or infinite (JS: `TypeError`).
    NotFinite { option: &'static str, value: f64 },
    /// A span or count below zero (JS: `RangeError`).
    Negative { option: &'static str, value: f64 },
    /// With a heartbeat, `heartbeatEveryMs ≥ staleAfterMs / 2`: two renewals
    /// must fit in the stale window (JS: `RangeError`).
    CadenceTooSlow { heartbeat_every_ms: u64, stale_after_ms: u64 },
    /// With a heartbeat, `staleAfterMs − heartbeatEveryMs − heartbeatSkewMs`
    /// leaves no write tolerance (JS: `RangeError`).
    NoWriteTolerance { stale_after_ms: u64, heartbeat_every_ms: u64, heartbeat_skew_ms: u64 },
}

impl OptionError {
    /// Whether JS should throw a `TypeError` (wrong kind of value) rather than
    /// a `RangeError` (a number out of range).
    pub fn is_type_error(&self) -> bool {
        matches!(self, OptionError::NotFinite { .. })
    }
}

/// A number shown as JS shows it in messages: `NaN`, `Infinity` and
/// `-Infinity` where Rust would print `NaN`, `inf` and `-inf`; finite values
/// as Rust prints them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JsNumber(pub f64);

impl fmt::Display for JsNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            v if v.is_nan() => f.write_str("NaN"),
            f64::INFINITY => f.write_str("Infinity"),
            f64::NEG_INFINITY => f.write_str("-Infinity"),
            v => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            OptionError::NotFinite { option, value } => {
                write!(f, "{option} must be a finite number, got {}", JsNumber(value))
            }
            OptionError::Negative { option, value } => {
                write!(f, "{option} must not be negative, got {value}")
            }
            OptionError::CadenceTooSlow { heartbeat_every_ms, stale_after_ms } => write!(
                f,
                "heartbeatEveryMs ({heartbeat_every_ms}) must be under half of staleAfterMs \
                 ({stale_after_ms}) so two renewals fit in the stale window"
            ),
            OptionError::NoWriteTolerance { stale_after_ms, heartbeat_every_ms, heartbeat_skew_ms } => write!(
                f,
                "heartbeatSkewMs ({heartbeat_skew_ms}) leaves no write tolerance: staleAfterMs \
                 ({stale_after_ms}) − heartbeatEveryMs ({heartbeat_every_ms}) − heartbeatSkewMs must be above 0"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for OptionError {}

/// Supervised-renewal parameters (a run lease's relations applied per item):
/// interval `I`, skew allowance `K`, write tolerance `W = S − I − K` and
/// reconfirmation bound `R = I`, all in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeartbeatConfig {
    /// `I`: renewal cadence.
    pub every_ms: u64,
    /// `K`: skew allowance.
    pub skew_ms: u64,
    /// `W`: how long renewals may fail before a reconfirmation is due.
    pub tolerance_ms: u64,
    /// `R`: how long a reconfirmation may take.
    pub reconfirm_ms: u64,
}

/// Validated, normalised runner options: whole milliseconds and counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Delay between passes, ≥ 1 ms.
    pub interval_ms: u64,
    /// Stale window, ms.
    pub stale_after_ms: u64,
    /// Renewal cadence, ≥ 1 ms (also computed when no heartbeat is given).
    pub heartbeat_every_ms: u64,
    /// Present when a heartbeat callback was given.
    pub heartbeat: Option<HeartbeatConfig>,
    /// Backoff after raising passes.
    pub backoff: Option<Backoff>,
    /// Claim attempts per pass, ≥ 1.
    pub batch_limit: u64,
    /// Items at once, 1..=64.
    pub concurrency: u32,
    /// Grace before an aborted perform is dropped (native host).
    pub abort_grace_ms: Option<u64>,
}

impl Config {
    /// Workers in a pass: `min(concurrency, batchLimit)`.
    pub fn pool_size(&self) -> u32 {
        // batch_limit ≥ 1 and concurrency ≤ 64, so this fits.
        self.concurrency.min(self.batch_limit.min(u64::from(MAX_JOB_CONCURRENCY)) as u32)
    }
}

/// A span or count: finite, not negative, truncated to whole units.
fn whole(option: &'static str, value: f64) -> Result<u64, OptionError> {
    if !value.is_finite() {
        return Err(OptionError::NotFinite { option, value });
    }
    if value < 0.0 {
        return Err(OptionError::Negative { option, value });
    }
    Ok(value as u64)
}

/// The concurrency rule: truncate; not a safe integer means 1; clamp to
/// 1..=64. Never an error (the reference implementation clamps rather than throws).
pub fn normalize_concurrency(requested: Option<f64>) -> u32 {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    let Some(value) = requested else { return 1 };
    // NaN and infinities fail the range check; `as i64` truncates toward
    // zero, as `Math.trunc` does.
    if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&value) {
        return 1;
    }
    (value as i64).clamp(1, i64::from(MAX_JOB_CONCURRENCY)) as u32
}

impl OptionsInput {
    /// Validates and normalises.
    ///
    /// # Errors
    /// [`OptionError`] naming the first bad option: a span, count or backoff
    /// field that is not finite or is negative; with a heartbeat, a cadence of
    /// half `staleAfterMs` or slower, or a skew allowance that leaves no write
    /// tolerance.
    pub fn validate(&self) -> Result<Config, OptionError> {
        let interval_ms = whole("intervalMs", self.interval_ms)?.max(1);
        let stale_after_ms = whole("staleAfterMs", self.stale_after_ms)?;
        let heartbeat_every_ms = match self.heartbeat_every_ms {
            Some(v) => whole("heartbeatEveryMs", v)?,
            None => MIN_HEARTBEAT_MS.max(stale_after_ms / HEARTBEAT_DIVISOR),
        }
        .max(1);
        let batch_limit = match self.batch_limit {
            Some(v) => whole("batchLimit", v)?,
            None => u64::from(DEFAULT_JOB_BATCH_LIMIT),
        }
        .max(1);
        if let Some(b) = self.backoff {
            whole("backoff.initialMs", b.initial_ms)?;
            whole("backoff.maxMs", b.max_ms)?;
            whole("backoff.multiplier", b.multiplier)?;
        }
        let abort_grace_ms = self.abort_grace_ms.map(|v| whole("abortGraceMs", v)).transpose()?;
        let skew = self.heartbeat_skew_ms.map(|v| whole("heartbeatSkewMs", v)).transpose()?;
        let heartbeat = if self.heartbeat {
            if heartbeat_every_ms.saturating_mul(2) >= stale_after_ms {
                return Err(OptionError::CadenceTooSlow { heartbeat_every_ms, stale_after_ms });
            }
            let skew_ms = skew.unwrap_or(heartbeat_every_ms / 2);
            let tolerance_ms = stale_after_ms.saturating_sub(heartbeat_every_ms).saturating_sub(skew_ms);
            if tolerance_ms == 0 {
                return Err(OptionError::NoWriteTolerance {
                    stale_after_ms,
                    heartbeat_every_ms,
                    heartbeat_skew_ms: skew_ms,
                });
            }
            Some(HeartbeatConfig { every_ms: heartbeat_every_ms, skew_ms, tolerance_ms, reconfirm_ms: heartbeat_every_ms })
        } else {
            None
        };
        Ok(Config {
            interval_ms,
            stale_after_ms,
            heartbeat_every_ms,
            heartbeat,
            backoff: self.backoff,
            batch_limit,
            concurrency: normalize_concurrency(self.concurrency),
            abort_grace_ms,
        })
    }
}
