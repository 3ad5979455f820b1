//! Runner options: their defaults and normalisation, and the checks that give
//! bad input an error naming the option instead of a hot loop.
//!
//! Numbers come in as `f64`, the way a JS caller hands them over; the native
//! host converts its `Duration`s. Whole milliseconds are kept: fractional
//! durations and counts are truncated (documented behaviour).

use crate::backoff::Backoff;
use crate::lease::{LeasePolicy, PolicyError};
use crate::queue::rules::{self, QueueNameRule};
use alloc::string::{String, ToString};
use core::fmt;

/// Claim attempts one pass may make.
pub const DEFAULT_JOB_BATCH_LIMIT: u32 = 25;
/// The ceiling on items performed at once.
pub(crate) const MAX_JOB_CONCURRENCY: u32 = 64;
/// The default cadence never goes under this.
pub(crate) const MIN_HEARTBEAT_MS: u64 = 250;
/// The default cadence is a third of the stale
/// window, so two renewals fit in it.
pub(crate) const HEARTBEAT_DIVISOR: u64 = 3;

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
    /// `heartbeatSkewMs`: the skew allowance `K` of supervised
    /// renewals; default `⌊heartbeatEveryMs / 2⌋`.
    pub heartbeat_skew_ms: Option<f64>,
    /// `backoff`: absent means a raising pass waits `intervalMs`.
    pub backoff: Option<Backoff>,
    /// `batchLimit`: claim attempts per pass; default 25, at least 1.
    pub batch_limit: Option<f64>,
    /// `concurrency`: items performed at once; default 1. Truncated; not a
    /// safe integer means 1; clamped to 1..=64; never an error.
    pub concurrency: Option<f64>,
    /// How an aborted `perform` ends: the exit grace `G` of the lease
    /// budget. Default [`AbortGrace::Never`] (JS).
    pub abort_grace: AbortGrace,
    /// What the host calls the span options in its messages (default: the
    /// JS names).
    pub names: OptionNames,
    /// When claims are made (default [`Scheduling::Passes`], the only one
    /// of the JS API).
    pub scheduling: Scheduling,
    /// The lease (ms) the job's claims and renewals stamp in its store,
    /// when it keeps one there (a worker on a database queue); `None`
    /// (default): none. Must be at least `staleAfterMs`
    /// ([`LeasePolicy::check_store_lease`]): peers take over a job once the
    /// store's lease runs out, and this runner stops its work only at the
    /// end of the stale window.
    pub store_lease_ms: Option<f64>,
    /// Whether an aborted `perform` is dropped by its item's exit deadline
    /// even when the abort came late (the process frozen or starved past the
    /// lapse): the grace then ends at the deadline, or at once past it. For a
    /// host whose drop stops the work (the native host's in-process work,
    /// stopped at its next await), so that work that ignores its signal does
    /// not run on for a whole grace beside a peer that may reclaim the item
    /// soon after the deadline. Default `false`: the grace runs from the
    /// abort, as a host needs when its work runs in a process of its own that
    /// a guard ends by the deadline and the perform only reads how it ended,
    /// or when a drop cannot stop the work (JavaScript).
    pub drop_by_exit_deadline: bool,
}

/// When a runner makes its claims.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// Passes: a pass starts `min(concurrency,
    /// batchLimit)` workers that claim until a claim answers nothing,
    /// raises, or `batchLimit` claims were made; the next pass comes
    /// `intervalMs` (or the backoff, after a raising pass) after the last
    /// item of this one settled.
    #[default]
    Passes,
    /// A worker pool on a job queue (see [`crate::runner::queue`]): each
    /// free slot claims as soon as work may be there, idle slots poll once
    /// per `intervalMs` for the whole pool, failed claims pause the pool's
    /// claims for the backoff's delay, failed items back nothing off, and a
    /// pass is a busy period (`batchLimit` does not apply).
    Queue,
}

/// How an aborted `perform` ends, which is the exit grace `G` the lease
/// budget `W + I + K + G < S` makes room for (see
/// [`LeasePolicy::for_runner`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum AbortGrace {
    /// Never dropped: the work must end itself when its signal fires (JS,
    /// where a promise cannot be stopped from outside). `G = 0`.
    #[default]
    Never,
    /// Dropped once the default grace passes: the smaller of 5 s and the
    /// room the lease leaves ([`LeasePolicy::grace_room_ms`]).
    Default,
    /// Dropped once this many ms pass (finite, not negative, whole ms; more
    /// than the room is refused with [`OptionError::GraceDoesNotFit`]).
    Ms(f64),
}

/// The names a host gives the options that take part in the lease budget,
/// and the unit it writes after their millisecond values, so a refusal
/// names what its user typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionNames {
    /// The stale window `S` (JS `staleAfterMs`).
    pub stale_after: &'static str,
    /// The renewal cadence `I` (JS `heartbeatEveryMs`).
    pub heartbeat_every: &'static str,
    /// The skew allowance `K` (JS `heartbeatSkewMs`).
    pub heartbeat_skew: &'static str,
    /// The exit grace `G` (no JS option: `G = 0` there).
    pub abort_grace: &'static str,
    /// Written right after each millisecond number (`""` or `"ms"`).
    pub unit: &'static str,
}

impl OptionNames {
    /// The JS API's names, numbers without a unit.
    pub const JS: OptionNames = OptionNames {
        stale_after: "staleAfterMs",
        heartbeat_every: "heartbeatEveryMs",
        heartbeat_skew: "heartbeatSkewMs",
        abort_grace: "abortGraceMs",
        unit: "",
    };
}

impl Default for OptionNames {
    /// [`OptionNames::JS`].
    fn default() -> Self {
        OptionNames::JS
    }
}

/// Which option was wrong and why. Display gives one line naming the option
/// with its JS name, e.g. `intervalMs must be a finite number, got NaN`.
#[allow(missing_docs)] // each variant's doc names its fields and units
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum OptionError {
    /// A span or count that is NaN or infinite (JS: `TypeError`).
    NotFinite { option: &'static str, value: f64 },
    /// A span or count below zero (JS: `RangeError`).
    Negative { option: &'static str, value: f64 },
    /// With a heartbeat, a skew allowance of 0: no two hosts' clocks agree to
    /// the millisecond (JS: `RangeError`). `skew_from_heartbeat_every_ms`:
    /// the cadence (ms) the allowance was left to default from (half of it,
    /// rounded down), so the message names the cadence the caller gave;
    /// `None` when the allowance itself was given as 0.
    ZeroSkew { names: OptionNames, skew_from_heartbeat_every_ms: Option<u64> },
    /// With a heartbeat, `heartbeatEveryMs ≥ staleAfterMs / 2`: two renewals
    /// must fit in the stale window ([`LeasePolicy::check_cadence`], the
    /// lease policy's relation 2) (JS: `RangeError`). `defaulted`: the
    /// cadence was not given but defaulted from the stale window
    /// (`max(250, ⌊staleAfterMs / 3⌋)`), so the message says what to give.
    CadenceTooSlow { heartbeat_every_ms: u64, stale_after_ms: u64, defaulted: bool, names: OptionNames },
    /// With a heartbeat, `staleAfterMs − heartbeatEveryMs − heartbeatSkewMs
    /// − G − 1` leaves no write tolerance (JS: `RangeError`).
    NoWriteTolerance { stale_after_ms: u64, heartbeat_every_ms: u64, heartbeat_skew_ms: u64, abort_grace_ms: u64, names: OptionNames },
    /// With a heartbeat, the abort grace given (ms) is longer than the
    /// `room_ms` the stale window leaves for it (see
    /// [`LeasePolicy::grace_room_ms`]); `room_ms` is 0 when none fits.
    GraceDoesNotFit {
        abort_grace_ms: u64,
        room_ms: u64,
        stale_after_ms: u64,
        heartbeat_every_ms: u64,
        heartbeat_skew_ms: u64,
        names: OptionNames,
    },
    /// The lease the job's claims stamp in its store (ms,
    /// [`OptionsInput::store_lease_ms`]) is shorter than the stale window:
    /// peers could take over a job this runner still works on.
    StoreLeaseTooShort { store_lease_ms: u64, stale_after_ms: u64, names: OptionNames },
    /// The queue the job claims from in its store (`queue`, as given)
    /// breaks `rule`, the rule of queue names every store holds to
    /// ([`rules::check_queue_name`]): no job can be queued on it, so every
    /// claim would fail.
    InvalidQueueName { queue: String, rule: QueueNameRule },
}

impl OptionError {
    /// Checks the name of the queue a job claims from (see
    /// [`OptionError::InvalidQueueName`]).
    ///
    /// # Errors
    /// [`OptionError::InvalidQueueName`] naming `queue` and the rule it
    /// breaks: empty, longer than [`rules::MAX_QUEUE_NAME_LEN`] bytes, or a
    /// character outside `A-Z a-z 0-9` and [`rules::QUEUE_NAME_PUNCTUATION`].
    pub fn check_queue(queue: &str) -> Result<(), OptionError> {
        rules::check_queue_name(queue).map_err(|rule| OptionError::InvalidQueueName { queue: queue.to_string(), rule })
    }

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
        match self {
            OptionError::NotFinite { option, value } => {
                write!(f, "{option} must be a finite number, got {}", JsNumber(*value))
            }
            OptionError::Negative { option, value } => {
                write!(f, "{option} must not be negative, got {value}")
            }
            OptionError::ZeroSkew { names: n, skew_from_heartbeat_every_ms: None } => write!(
                f,
                "{} must be above 0: no two hosts' clocks agree to the millisecond",
                n.heartbeat_skew
            ),
            OptionError::ZeroSkew { names: n, skew_from_heartbeat_every_ms: Some(every) } => write!(
                f,
                "{every_name} ({every}{u}) must be at least 2{u} when {skew} is left out: the skew allowance \
                 defaults to half of it, and must be above 0 (no two hosts' clocks agree to the millisecond)",
                every_name = n.heartbeat_every,
                skew = n.heartbeat_skew,
                u = n.unit
            ),
            // Only a window of at most twice the floor is too short for the default cadence.
            OptionError::CadenceTooSlow { heartbeat_every_ms, stale_after_ms, defaulted: true, names: n } => {
                write!(
                    f,
                    "{every} ({heartbeat_every_ms}{u}, its default: the larger of {MIN_HEARTBEAT_MS}{u} and a third of {stale}) \
                     must be under half of {stale} ({stale_after_ms}{u}) so two renewals fit in the stale window: give ",
                    every = n.heartbeat_every,
                    stale = n.stale_after,
                    u = n.unit
                )?;
                // A cadence is at least 1: in a window of 2 or less none is under half of it.
                let half = stale_after_ms.div_ceil(2);
                if half > 1 {
                    write!(f, "a {} under {half}{}, or ", n.heartbeat_every, n.unit)?;
                }
                write!(f, "a {} above {}{}", n.stale_after, 2 * MIN_HEARTBEAT_MS, n.unit)
            }
            OptionError::CadenceTooSlow { heartbeat_every_ms, stale_after_ms, defaulted: false, names: n } => write!(
                f,
                "{} ({heartbeat_every_ms}{u}) must be under half of {} \
                 ({stale_after_ms}{u}) so two renewals fit in the stale window",
                n.heartbeat_every,
                n.stale_after,
                u = n.unit
            ),
            OptionError::NoWriteTolerance { stale_after_ms, heartbeat_every_ms, heartbeat_skew_ms, abort_grace_ms: 0, names: n } => write!(
                f,
                "{skew} ({heartbeat_skew_ms}{u}) leaves no write tolerance: {stale} \
                 ({stale_after_ms}{u}) − {every} ({heartbeat_every_ms}{u}) − {skew} must be above 1{u}",
                skew = n.heartbeat_skew,
                stale = n.stale_after,
                every = n.heartbeat_every,
                u = n.unit
            ),
            OptionError::NoWriteTolerance { stale_after_ms, heartbeat_every_ms, heartbeat_skew_ms, abort_grace_ms, names: n } => write!(
                f,
                "{skew} ({heartbeat_skew_ms}{u}) and {grace} ({abort_grace_ms}{u}) leave no write tolerance: \
                 {stale} ({stale_after_ms}{u}) − {every} ({heartbeat_every_ms}{u}) − {skew} − {grace} must be above 1{u}",
                skew = n.heartbeat_skew,
                grace = n.abort_grace,
                stale = n.stale_after,
                every = n.heartbeat_every,
                u = n.unit
            ),
            // One sentence: both options with their values, why, and the most that fits.
            OptionError::GraceDoesNotFit { abort_grace_ms, room_ms, stale_after_ms, names: n, .. } => write!(
                f,
                "{grace} ({abort_grace_ms}{u}) does not fit in {stale} ({stale_after_ms}{u}): \
                 the work must have ended before a peer may reclaim, so at most {room_ms}{u} of \
                 grace fits (shorten {grace} or lengthen {stale})",
                grace = n.abort_grace,
                stale = n.stale_after,
                u = n.unit
            ),
            OptionError::StoreLeaseTooShort { store_lease_ms, stale_after_ms, names: n } => write!(
                f,
                "the job's claims stamp a lease of {store_lease_ms}{u} in its store, shorter than {stale} \
                 ({stale_after_ms}{u}): other workers would take over jobs this runner still works on \
                 (give the job a lease of at least {stale}, or a shorter {stale})",
                stale = n.stale_after,
                u = n.unit
            ),
            OptionError::InvalidQueueName { queue, rule } => write!(
                f,
                "invalid queue name \"{}\": {rule} (the queue the job claims from: no job can be queued on it, \
                 so every claim would fail)",
                // Escaped as Debug would, but for ASCII only: Debug's Unicode tables cost the
                // runner's .wasm 5 KiB gzipped.
                queue.escape_default()
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for OptionError {}

/// Validated, normalised runner options: whole milliseconds and counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Delay between passes, ≥ 1 ms.
    pub interval_ms: u64,
    /// Stale window, ms.
    pub stale_after_ms: u64,
    /// Renewal cadence, ≥ 1 ms (also computed when no heartbeat is given;
    /// with one it is `lease`'s `heartbeat_interval_ms`).
    pub heartbeat_every_ms: u64,
    /// Present when a heartbeat callback was given: the lease each claim is
    /// kept under, the same [`LeasePolicy`] a run lease is (renewal interval
    /// `I`, skew allowance `K`, stale window `S`, write tolerance `W = S − I
    /// − K − G − 1` and exit grace `G`, from [`LeasePolicy::for_runner`]).
    /// Its [`LeasePolicy::exit_deadline`] is the instant by which an item's
    /// work has ended; its [`LeasePolicy::supervision`] is how each item's
    /// renewals are supervised (a reconfirmation bounded by `I`).
    pub lease: Option<LeasePolicy>,
    /// Backoff after raising passes.
    pub backoff: Option<Backoff>,
    /// Claim attempts per pass, ≥ 1.
    pub batch_limit: u64,
    /// Items at once, 1..=64.
    pub concurrency: u32,
    /// Grace before an aborted perform is dropped (native host); `None`:
    /// never dropped. With a heartbeat it is `lease`'s exit grace.
    pub abort_grace_ms: Option<u64>,
    /// When claims are made.
    pub scheduling: Scheduling,
    /// Whether a late abort's drop is still due by the exit deadline
    /// ([`OptionsInput::drop_by_exit_deadline`]).
    pub drop_by_exit_deadline: bool,
}

impl Config {
    /// Workers (slots) of the runner: `min(concurrency, batchLimit)` with
    /// [`Scheduling::Passes`], `concurrency` with [`Scheduling::Queue`].
    pub fn pool_size(&self) -> u32 {
        if self.scheduling == Scheduling::Queue {
            return self.concurrency;
        }
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
/// 1..=64. Never an error: a value out of range is clamped, not refused.
pub(crate) fn normalize_concurrency(requested: Option<f64>) -> u32 {
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
    /// half `staleAfterMs` or slower, an abort grace that does not fit, or a
    /// skew allowance that leaves no write tolerance. The lease relations are
    /// [`LeasePolicy::for_runner`]'s, the one validator of the lease budget.
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
        let names = self.names;
        let grace = match self.abort_grace {
            AbortGrace::Never => Some(0),
            AbortGrace::Default => None,
            AbortGrace::Ms(v) => Some(whole(names.abort_grace, v)?),
        };
        let skew = self.heartbeat_skew_ms.map(|v| whole("heartbeatSkewMs", v)).transpose()?;
        if let Some(store_lease_ms) = self.store_lease_ms.map(|v| whole("storeLeaseMs", v)).transpose()? {
            LeasePolicy::check_store_lease(stale_after_ms, store_lease_ms)
                .map_err(|_| OptionError::StoreLeaseTooShort { store_lease_ms, stale_after_ms, names })?;
        }
        let lease = if self.heartbeat {
            LeasePolicy::check_cadence(stale_after_ms, heartbeat_every_ms)
                .map_err(|_| OptionError::CadenceTooSlow {
                    heartbeat_every_ms,
                    stale_after_ms,
                    defaulted: self.heartbeat_every_ms.is_none(),
                    names,
                })?;
            let skew_ms = skew.unwrap_or(heartbeat_every_ms / 2);
            let policy = LeasePolicy::for_runner(stale_after_ms, heartbeat_every_ms, skew_ms, grace).map_err(|e| match e {
                PolicyError::GraceDoesNotFit { exit_grace_ms, room_ms, .. } => OptionError::GraceDoesNotFit {
                    abort_grace_ms: exit_grace_ms,
                    room_ms,
                    stale_after_ms,
                    heartbeat_every_ms,
                    heartbeat_skew_ms: skew_ms,
                    names,
                },
                PolicyError::NotPositive { field: "skew_allowance_ms" } => OptionError::ZeroSkew {
                    names,
                    skew_from_heartbeat_every_ms: skew.is_none().then_some(heartbeat_every_ms),
                },
                // With the cadence under half the window, the derived
                // tolerance is the only span left to break a relation.
                _ => OptionError::NoWriteTolerance {
                    stale_after_ms,
                    heartbeat_every_ms,
                    heartbeat_skew_ms: skew_ms,
                    abort_grace_ms: grace.unwrap_or(0),
                    names,
                },
            })?;
            Some(policy)
        } else {
            None
        };
        let abort_grace_ms = match (self.abort_grace, lease) {
            (AbortGrace::Never, _) => None,
            (_, Some(lease)) => Some(lease.exit_grace_ms),
            // Without renewals no claim is ever lost, so no perform is
            // aborted: the grace never applies.
            (_, None) => Some(grace.unwrap_or(crate::lease::DEFAULT_EXIT_GRACE_MS)),
        };
        Ok(Config {
            interval_ms,
            stale_after_ms,
            heartbeat_every_ms,
            lease,
            backoff: self.backoff,
            batch_limit,
            concurrency: normalize_concurrency(self.concurrency),
            abort_grace_ms,
            scheduling: self.scheduling,
            drop_by_exit_deadline: self.drop_by_exit_deadline,
        })
    }
}
