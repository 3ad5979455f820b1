//! The lease policy
//! and the validator that refuses unsafe sets.
//!
//! # The timeline the relations protect
//!
//! Let `T` be the instant, on the owner's clock, that the owner sent with its
//! last confirmed renewal; the store persisted it as the run's heartbeat.
//!
//! - The owner pulses every `heartbeat_interval_ms`, each pulse a renewal.
//! - Its independent deadline falls at `T + write_tolerance_ms`. There it makes
//!   one reconfirmation, bounded by one `heartbeat_interval_ms`: renewed, it
//!   goes on; otherwise it lapses and interrupts its work. So the owner has
//!   decided by `T + write_tolerance_ms + heartbeat_interval_ms`, its own clock.
//! - A peer may steal once the heartbeat is older than `stale_after_ms` on the
//!   peer's clock. A peer whose clock runs up to `skew_allowance_ms` ahead
//!   reaches that point when the owner's clock reads
//!   `T + stale_after_ms - skew_allowance_ms`.
//!
//! The owner must stop before any peer can start, hence
//! `write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms < stale_after_ms`
//! (see [`LeasePolicy::validate`] for every relation).

use alloc::vec::Vec;
use core::fmt;

use super::LeaseLiveness;
use crate::supervision::{Cadence, Reconfirm, SupervisionPolicy};

/// The four spans that govern a lease, in whole milliseconds. Build one with [`LeasePolicy::DEFAULT`] (optionally with
/// struct-update syntax) or [`LeasePolicy::for_stale_after`], and check it
/// with [`LeasePolicy::validate`] before use.
///
/// # Examples
///
/// A policy that reclaims a crashed owner's runs within 4 s: the owner
/// decides by 3 000 + 500 = 3 500 ms, a peer 250 ms ahead may steal after
/// 4 000 - 250 = 3 750 ms.
///
/// ```
/// use leasehold_core::lease::LeasePolicy;
///
/// let fast = LeasePolicy {
///     heartbeat_interval_ms: 500,
///     skew_allowance_ms: 250,
///     stale_after_ms: 4_000,
///     write_tolerance_ms: 3_000,
/// };
/// assert_eq!(fast.validate(), Ok(vec![]));
///
/// // 3 250 ms of tolerance moves the owner's decision onto the instant a peer
/// // may steal: refused, naming the relation and the numbers.
/// let unsafe_set = LeasePolicy { write_tolerance_ms: 3_250, ..fast };
/// let error = unsafe_set.validate().unwrap_err();
/// assert!(error.to_string().contains("(3250 + 500 + 250 = 4000) must be less than stale_after_ms (4000)"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeasePolicy {
    /// How often the owner pulses to renew its lease. Also the bound on the one reconfirmation made at
    /// the write-tolerance deadline. Default 2 000 ms.
    pub heartbeat_interval_ms: u64,
    /// How far the owner's clock may run behind a peer's before the lease
    /// reasoning stops holding. Default 1 000 ms.
    pub skew_allowance_ms: u64,
    /// How old a persisted heartbeat must be before a peer may steal the run:
    /// alive while `heartbeat_at >= now -
    /// stale_after_ms`. Default 15 000 ms.
    pub stale_after_ms: u64,
    /// How long the owner keeps working through failing or stalled renewal
    /// writes, measured from the instant sent with its last confirmed renewal.
    /// Default 11 000 ms.
    pub write_tolerance_ms: u64,
}

impl LeasePolicy {
    /// The reference implementation's constants: interval 2 s, skew allowance 1 s, stale-after
    /// 15 s, write tolerance 11 s.
    ///
    /// Kept as the reference implementation has them: the owner decides by 11 + 2 = 13 s after its
    /// last confirmed renewal and a peer 1 s ahead may steal after 15 - 1 =
    /// 14 s, so a full second separates the two, on top of the skew allowance;
    /// the 11 s tolerance rides out five missed pulses before reconfirming,
    /// and stale-after is 7.5 intervals, far above the two the validator
    /// requires. Tightening any of them only trades that slack for a faster
    /// reclaim of crashed owners.
    pub const DEFAULT: LeasePolicy = LeasePolicy {
        heartbeat_interval_ms: 2_000,
        skew_allowance_ms: 1_000,
        stale_after_ms: 15_000,
        write_tolerance_ms: 11_000,
    };

    /// The defaults scaled to `stale_after_ms`, keeping their proportions:
    /// interval `2/15`, skew allowance `1/15`, write tolerance `11/15` of
    /// stale-after, each rounded down to whole milliseconds.
    ///
    /// For a runner that knows only how stale a lease may grow (the runner's
    /// `staleAfterMs` option). Rounding down keeps every relation of
    /// [`LeasePolicy::validate`] and raises no warning.
    ///
    /// # Errors
    ///
    /// Below 15 ms the skew allowance (and below 8 ms the interval) rounds to
    /// zero: [`PolicyError::NotPositive`] names the field, as `validate` would.
    pub fn for_stale_after(stale_after_ms: u64) -> Result<LeasePolicy, PolicyError> {
        // u128: `stale_after_ms * 11` must not overflow for any u64 input.
        let part = |fifteenths: u128| -> u64 {
            // Never exceeds `stale_after_ms`, so the conversion cannot fail.
            u64::try_from(u128::from(stale_after_ms) * fifteenths / 15).unwrap_or(u64::MAX)
        };
        let policy = LeasePolicy {
            heartbeat_interval_ms: part(2),
            skew_allowance_ms: part(1),
            stale_after_ms,
            write_tolerance_ms: part(11),
        };
        policy.validate().map(|_| policy)
    }

    /// `write_tolerance_ms + heartbeat_interval_ms`: the latest time after the
    /// last confirmed renewal by which the owner has either renewed or lapsed
    /// (the deadline plus the one bounded reconfirmation). Saturates at
    /// `u64::MAX`.
    #[must_use]
    pub fn reconfirm_bound_ms(&self) -> u64 {
        self.write_tolerance_ms.saturating_add(self.heartbeat_interval_ms)
    }

    /// The [`SupervisionPolicy`] that keeps a lease under this policy: pulses
    /// every `heartbeat_interval_ms`, the deadline `write_tolerance_ms` after
    /// the last confirmed renewal's send time, and one reconfirmation bounded
    /// by one `heartbeat_interval_ms` (the bound relation 3 of
    /// [`LeasePolicy::validate`] reserves). `cadence` and `reconfirm` are the
    /// caller's shape: a run lease's heartbeat loop uses [`Cadence::AfterPulse`]
    /// with [`Reconfirm::Separate`].
    #[must_use]
    pub fn supervision(&self, cadence: Cadence, reconfirm: Reconfirm) -> SupervisionPolicy {
        SupervisionPolicy {
            interval_ms: self.heartbeat_interval_ms,
            tolerance_ms: self.write_tolerance_ms,
            reconfirm_ms: self.heartbeat_interval_ms,
            cadence,
            reconfirm,
        }
    }

    /// The lease-only liveness check for this policy's stale-after.
    #[must_use]
    pub fn lease_liveness(&self) -> LeaseLiveness {
        LeaseLiveness { stale_after_ms: self.stale_after_ms }
    }

    /// Checks the relations that make the lease safe, in this order, and
    /// answers the first one broken.
    ///
    /// 1. **Every span is positive.** A zero interval pulses in a busy loop; a
    ///    zero stale-after makes every lease stealable the instant it is
    ///    written; a zero write tolerance lapses at the first pulse; a zero
    ///    skew allowance claims two hosts' clocks agree to the millisecond,
    ///    which none do. → [`PolicyError::NotPositive`].
    /// 2. **`stale_after_ms >= 2 * heartbeat_interval_ms`.** The persisted
    ///    heartbeat is refreshed once per interval, so a healthy owner's is
    ///    already up to one interval old when a peer looks; below two
    ///    intervals a single late or failed pulse would make a live owner's
    ///    run stealable. → [`PolicyError::StaleAfterUnderTwoIntervals`].
    /// 3. **`write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms <
    ///    stale_after_ms`.** The owner decides to renew or lapse by `T +
    ///    write_tolerance + interval` on its clock (the deadline plus the one
    ///    reconfirmation, bounded by an interval); a peer whose clock runs up to
    ///    the skew allowance ahead may steal once its clock passes `T +
    ///    stale_after`, i.e. when the owner's reads `T + stale_after - skew`.
    ///    The decision to lapse must fall at least the skew allowance before a
    ///    peer may steal; strictly, so the two never share a millisecond.
    ///    Broken, a peer can take the run while the owner still works on it:
    ///    the fence still stops the stale owner's durable writes, but its
    ///    other side effects overlap the new owner's.
    ///    → [`PolicyError::LapseNotBeforeSteal`].
    ///
    /// Sums are computed without overflow: a set whose sum exceeds `u64` is
    /// refused by relation 3, never wrapped.
    ///
    /// # Warnings
    ///
    /// A set that is safe but wasteful is accepted with warnings:
    /// [`PolicyWarning::WriteToleranceUnderInterval`] when `write_tolerance_ms
    /// < heartbeat_interval_ms`.
    ///
    /// # Errors
    ///
    /// The first broken relation, as a [`PolicyError`] whose `Display` names
    /// the relation and the numbers.
    pub fn validate(&self) -> Result<Vec<PolicyWarning>, PolicyError> {
        let fields = [
            ("heartbeat_interval_ms", self.heartbeat_interval_ms),
            ("skew_allowance_ms", self.skew_allowance_ms),
            ("stale_after_ms", self.stale_after_ms),
            ("write_tolerance_ms", self.write_tolerance_ms),
        ];
        if let Some(&(field, _)) = fields.iter().find(|(_, value)| *value == 0) {
            return Err(PolicyError::NotPositive { field });
        }
        if u128::from(self.stale_after_ms) < 2 * u128::from(self.heartbeat_interval_ms) {
            return Err(PolicyError::StaleAfterUnderTwoIntervals {
                stale_after_ms: self.stale_after_ms,
                heartbeat_interval_ms: self.heartbeat_interval_ms,
            });
        }
        let lapse_bound = u128::from(self.write_tolerance_ms)
            + u128::from(self.heartbeat_interval_ms)
            + u128::from(self.skew_allowance_ms);
        if lapse_bound >= u128::from(self.stale_after_ms) {
            return Err(PolicyError::LapseNotBeforeSteal {
                write_tolerance_ms: self.write_tolerance_ms,
                heartbeat_interval_ms: self.heartbeat_interval_ms,
                skew_allowance_ms: self.skew_allowance_ms,
                stale_after_ms: self.stale_after_ms,
            });
        }
        let mut warnings = Vec::new();
        if self.write_tolerance_ms < self.heartbeat_interval_ms {
            warnings.push(PolicyWarning::WriteToleranceUnderInterval {
                write_tolerance_ms: self.write_tolerance_ms,
                heartbeat_interval_ms: self.heartbeat_interval_ms,
            });
        }
        Ok(warnings)
    }
}

impl Default for LeasePolicy {
    /// [`LeasePolicy::DEFAULT`].
    fn default() -> LeasePolicy {
        LeasePolicy::DEFAULT
    }
}

/// Why [`LeasePolicy::validate`] refused a policy: the first relation broken,
/// with the numbers that broke it. `Display` names the relation and the
/// numbers; under the `std` feature it is a `std::error::Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyError {
    /// Relation 1: `field` (a [`LeasePolicy`] field name, e.g.
    /// `"heartbeat_interval_ms"`) is zero; every span must be positive.
    NotPositive {
        /// The field that is zero.
        field: &'static str,
    },
    /// Relation 2: `stale_after_ms < 2 * heartbeat_interval_ms`.
    StaleAfterUnderTwoIntervals {
        /// The policy's stale-after, ms.
        stale_after_ms: u64,
        /// The policy's heartbeat interval, ms.
        heartbeat_interval_ms: u64,
    },
    /// Relation 3: `write_tolerance_ms + heartbeat_interval_ms +
    /// skew_allowance_ms >= stale_after_ms`, so a peer could steal before the
    /// owner decides to lapse.
    LapseNotBeforeSteal {
        /// The policy's write tolerance, ms.
        write_tolerance_ms: u64,
        /// The policy's heartbeat interval (the reconfirmation bound), ms.
        heartbeat_interval_ms: u64,
        /// The policy's skew allowance, ms.
        skew_allowance_ms: u64,
        /// The policy's stale-after, ms.
        stale_after_ms: u64,
    },
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PolicyError::NotPositive { field } => {
                write!(f, "lease policy: {field} must be positive, got 0")
            }
            PolicyError::StaleAfterUnderTwoIntervals { stale_after_ms, heartbeat_interval_ms } => write!(
                f,
                "lease policy: stale_after_ms ({stale_after_ms}) must be at least \
                 2 * heartbeat_interval_ms (2 * {heartbeat_interval_ms} = {}): \
                 one missed pulse would make a live owner's run stealable",
                2 * u128::from(heartbeat_interval_ms)
            ),
            PolicyError::LapseNotBeforeSteal {
                write_tolerance_ms,
                heartbeat_interval_ms,
                skew_allowance_ms,
                stale_after_ms,
            } => write!(
                f,
                "lease policy: write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms \
                 ({write_tolerance_ms} + {heartbeat_interval_ms} + {skew_allowance_ms} = {}) \
                 must be less than stale_after_ms ({stale_after_ms}): the owner's decision to \
                 lapse must fall at least the skew allowance before a peer may steal",
                u128::from(write_tolerance_ms) + u128::from(heartbeat_interval_ms) + u128::from(skew_allowance_ms)
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PolicyError {}

/// A policy [`LeasePolicy::validate`] accepts but that works against itself.
/// `Display` says what and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyWarning {
    /// `write_tolerance_ms < heartbeat_interval_ms`: the write-tolerance
    /// deadline falls before the next pulse, so every renewal goes through a
    /// reconfirmation and a single slow or failed write lapses the lease. Safe,
    /// but it gives up the tolerance the lease has room for.
    WriteToleranceUnderInterval {
        /// The policy's write tolerance, ms.
        write_tolerance_ms: u64,
        /// The policy's heartbeat interval, ms.
        heartbeat_interval_ms: u64,
    },
}

impl fmt::Display for PolicyWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PolicyWarning::WriteToleranceUnderInterval { write_tolerance_ms, heartbeat_interval_ms } => {
                write!(
                    f,
                    "lease policy: write_tolerance_ms ({write_tolerance_ms}) is under one \
                     heartbeat_interval_ms ({heartbeat_interval_ms}): every renewal becomes a \
                     reconfirmation and one failed write lapses the lease"
                )
            }
        }
    }
}
