//! The lease policy, with our exit grace, and the one validator that
//! refuses unsafe sets, for run ownership and for the job runner alike.
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
//! - After the decision to lapse, the owner's work may take up to
//!   `exit_grace_ms` (`G`) to end: a command gets SIGTERM, then SIGKILL after
//!   its grace; a Rust perform is dropped once its grace passes. So the work
//!   has ended by [`LeasePolicy::exit_deadline`], `T + W + I + G`.
//!
//! The owner's work must have ended before any peer can start, hence, with
//! `W`, `I`, `K`, `G`, `S` for the five spans,
//! `W + I + K + G < S` strictly (see [`LeasePolicy::validate`] for every
//! relation). The job runner derives its `W` from the other four with
//! [`LeasePolicy::for_runner`], as the largest that keeps the relation.

use alloc::vec::Vec;
use core::fmt;

use super::LeaseLiveness;
use crate::supervision::{Cadence, Reconfirm, SupervisionPolicy};
use crate::Millis;

/// How long before a lease's [`LeasePolicy::exit_deadline`] a watchdog
/// that ends the work from outside (the command-line guard) sends its final
/// SIGKILL: 50 ms, for its own timer waking late on a loaded machine and the
/// kernel tearing the processes down, so that they are gone by the deadline
/// itself, which the lease budget keeps before any peer may reclaim.
pub const WATCHDOG_LEAD_MS: u64 = 50;

/// The exit grace a job runner takes when none is given, if it fits (see
/// [`LeasePolicy::grace_room_ms`]): 5 000 ms.
pub const DEFAULT_EXIT_GRACE_MS: u64 = 5_000;

/// The most [`LeasePolicy::claim_age_tolerance_ms`] answers, ms: a page's
/// jobs handed over within it of their stamp skip a renewal (one statement
/// for the page) that would otherwise precede nearly every job of a page.
pub const MAX_CLAIM_AGE_TOLERANCE_MS: u64 = 100;

/// The five spans that govern a lease, in whole milliseconds (the four of a
/// run lease and our exit grace). Build one with
/// [`LeasePolicy::DEFAULT`] (optionally with struct-update syntax),
/// [`LeasePolicy::for_stale_after`] or [`LeasePolicy::for_runner`], and check
/// it with [`LeasePolicy::validate`] before use.
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
///     exit_grace_ms: 0,
/// };
/// assert_eq!(fast.validate(), Ok(vec![]));
///
/// // 3 250 ms of tolerance moves the owner's decision onto the instant a peer
/// // may steal: refused, naming the relation and the numbers.
/// let unsafe_set = LeasePolicy { write_tolerance_ms: 3_250, ..fast };
/// let error = unsafe_set.validate().unwrap_err();
/// assert!(error.to_string().contains("(3250 + 500 + 250 = 4000) must be less than stale_after_ms (4000)"));
///
/// // So does a work that may take 250 ms to end after the lapse (the message
/// // names the grace once there is one).
/// let slow_exit = LeasePolicy { exit_grace_ms: 250, ..fast }.validate().unwrap_err();
/// assert!(slow_exit.to_string().contains("(3000 + 500 + 250 + 250 = 4000)"));
/// ```
///
/// A policy from the stale window alone, and a job runner's (renewals every
/// 10 s, 5 s of skew, the default exit grace): the owner's work has ended
/// before the first instant a peer may reclaim, and a lease's liveness check
/// takes the same stale window.
///
/// ```
/// use leasehold_core::lease::{LeasePolicy, DEFAULT_EXIT_GRACE_MS};
/// use leasehold_core::Millis;
///
/// assert_eq!(LeasePolicy::for_stale_after(15_000), Ok(LeasePolicy::DEFAULT));
///
/// // Room for a grace: 30 000 - 5 000 - 2 · 10 000 ms.
/// assert_eq!(LeasePolicy::grace_room_ms(30_000, 10_000, 5_000), 5_000);
/// let runner = LeasePolicy::for_runner(30_000, 10_000, 5_000, None).unwrap();
/// assert_eq!(runner.exit_grace_ms, DEFAULT_EXIT_GRACE_MS);
/// let confirmed = Millis(1_000_000);
/// assert_eq!(runner.reconfirm_bound_ms(), runner.write_tolerance_ms + 10_000);
/// assert!(runner.exit_deadline(confirmed) < runner.reclaim_from(confirmed));
/// assert_eq!(runner.lease_liveness().stale_after_ms, 30_000);
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
    /// `G`: how long the owner's work may take to end after the decision to
    /// lapse (a command's SIGTERM-to-SIGKILL grace; how long an aborted Rust
    /// perform may run on before it is dropped). 0 when the work is not
    /// stopped from outside and must end itself on its abort signal (a run
    /// lease's interrupt; a JS perform). Default 0.
    pub exit_grace_ms: u64,
}

impl LeasePolicy {
    /// The default spans: interval 2 s, skew allowance 1 s, stale-after
    /// 15 s, write tolerance 11 s, no exit grace.
    ///
    /// They leave slack on every side: the owner decides by 11 + 2 = 13 s after its
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
        exit_grace_ms: 0,
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
            exit_grace_ms: 0,
        };
        policy.validate().map(|_| policy)
    }

    /// The longest exit grace that fits a job runner's lease of
    /// `stale_after_ms` (`S`) renewed every `heartbeat_interval_ms` (`I`) with
    /// `skew_allowance_ms` (`K`): `S − K − 2·I` ms, 0 when nothing fits. The
    /// grace is taken out of the write tolerance, and what it leaves the
    /// lease is two renewal intervals: the tolerance (at least `I − 1`, the
    /// strict relation's millisecond aside) and the reconfirmation. Less
    /// would send renewals more often than the cadence asks.
    #[must_use]
    pub fn grace_room_ms(stale_after_ms: u64, heartbeat_interval_ms: u64, skew_allowance_ms: u64) -> u64 {
        stale_after_ms.saturating_sub(skew_allowance_ms).saturating_sub(heartbeat_interval_ms.saturating_mul(2))
    }

    /// The policy a job runner keeps each claim under: stale window
    /// `stale_after_ms` (`S`), renewals every `heartbeat_interval_ms` (`I`),
    /// skew allowance `skew_allowance_ms` (`K`) and exit grace `G`:
    /// `exit_grace_ms`, or, when `None`, the smaller of
    /// [`DEFAULT_EXIT_GRACE_MS`] and [`LeasePolicy::grace_room_ms`]. The write
    /// tolerance is the largest that keeps `W + I + K + G < S`: `W = S − I −
    /// K − G − 1`.
    ///
    /// # Errors
    ///
    /// [`PolicyError::GraceDoesNotFit`] when a given grace above 0 is longer
    /// than [`LeasePolicy::grace_room_ms`] (0, for a work that ends itself,
    /// always fits); otherwise the first relation of
    /// [`LeasePolicy::validate`] the set breaks (a write tolerance of 0 is
    /// [`PolicyError::NotPositive`] naming `write_tolerance_ms`).
    pub fn for_runner(
        stale_after_ms: u64,
        heartbeat_interval_ms: u64,
        skew_allowance_ms: u64,
        exit_grace_ms: Option<u64>,
    ) -> Result<LeasePolicy, PolicyError> {
        let room_ms = LeasePolicy::grace_room_ms(stale_after_ms, heartbeat_interval_ms, skew_allowance_ms);
        let exit_grace_ms = match exit_grace_ms {
            None => DEFAULT_EXIT_GRACE_MS.min(room_ms),
            Some(grace) if grace > room_ms && grace > 0 => {
                return Err(PolicyError::GraceDoesNotFit {
                    exit_grace_ms: grace,
                    room_ms,
                    stale_after_ms,
                    heartbeat_interval_ms,
                    skew_allowance_ms,
                });
            }
            Some(grace) => grace,
        };
        let policy = LeasePolicy {
            heartbeat_interval_ms,
            skew_allowance_ms,
            stale_after_ms,
            write_tolerance_ms: stale_after_ms
                .saturating_sub(heartbeat_interval_ms)
                .saturating_sub(skew_allowance_ms)
                .saturating_sub(exit_grace_ms)
                .saturating_sub(1),
            exit_grace_ms,
        };
        policy.validate().map(|_| policy)
    }

    /// The instant by which the owner's work has ended, for a lease whose last
    /// confirmed renewal was sent at `confirmed_at` (the owner's clock): the
    /// latest lapse decision, [`LeasePolicy::reconfirm_bound_ms`] after it,
    /// plus the exit grace, `T + W + I + G`. A validated policy puts it
    /// strictly before [`LeasePolicy::reclaim_from`]. A watchdog that must end
    /// the work when the owner cannot (see the command-line guard) ends it by
    /// then; every confirmed renewal moves it. Saturates at [`Millis::MAX`].
    #[must_use]
    pub fn exit_deadline(&self, confirmed_at: Millis) -> Millis {
        confirmed_at.after(self.reconfirm_bound_ms().saturating_add(self.exit_grace_ms))
    }

    /// How long before a claim made at `T` the store may have stamped the
    /// lease of a job the claim hands over, ms: at most 100, and at most
    /// half the skew allowance. A queue that claims a page of jobs in one
    /// statement hands each to a slot's later claim; one stamped longer
    /// before that claim is renewed first.
    ///
    /// Why: the owner measures the lease from `T`, so a lease stamped `d`
    /// earlier has the owner stop `d` later than the store's expiry would
    /// have it ([`LeasePolicy::exit_deadline`] is `S − K − 1` after `T`, a
    /// peer reclaims `S` after the stamp on its clock). That `d` comes out of
    /// the skew allowance `K`: with `d ≤ K / 2`, clocks may still differ by
    /// up to `K / 2`. A fixed 100 ms would spend all of a `K` under 100 ms
    /// (a heartbeat cadence under 200 ms, `K` being half of it by default).
    #[must_use]
    pub fn claim_age_tolerance_ms(&self) -> u64 {
        MAX_CLAIM_AGE_TOLERANCE_MS.min(self.skew_allowance_ms / 2)
    }

    /// The earliest instant, on the owner's clock, at which a peer whose clock
    /// runs up to the skew allowance ahead may reclaim a lease whose last
    /// confirmed renewal was sent at `confirmed_at`: `T + S − K` (the peer
    /// steals once the stamp is more than `S` old on its clock). Saturates.
    #[must_use]
    pub fn reclaim_from(&self, confirmed_at: Millis) -> Millis {
        confirmed_at.after(self.stale_after_ms.saturating_sub(self.skew_allowance_ms))
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

    /// Relation 2 of [`LeasePolicy::validate`] on its own, for a stale window
    /// of `stale_after_ms` (`S`) and renewals every `heartbeat_interval_ms`
    /// (`I`), both ms: two renewals fit in the window, `S > 2·I`. The job
    /// runner's options check their cadence with it first, so a cadence too
    /// slow is named as such before the spans derived from it are.
    ///
    /// # Errors
    ///
    /// [`PolicyError::StaleAfterUnderTwoIntervals`] when `S ≤ 2·I` (computed
    /// without overflow).
    pub fn check_cadence(stale_after_ms: u64, heartbeat_interval_ms: u64) -> Result<(), PolicyError> {
        if u128::from(stale_after_ms) <= 2 * u128::from(heartbeat_interval_ms) {
            return Err(PolicyError::StaleAfterUnderTwoIntervals { stale_after_ms, heartbeat_interval_ms });
        }
        Ok(())
    }

    /// The stale window `S` (`stale_after_ms`) against the lease a store
    /// stamps on each claim and renewal (`store_lease_ms`), both ms: the
    /// store's lease must last at least `S`. Peers take over an item once
    /// the store's lease has run out, while the owner stops only at the end
    /// of `S` (less its tolerances): with a shorter lease, the item is
    /// taken over while its owner still works on it, between two renewals.
    ///
    /// # Errors
    ///
    /// [`PolicyError::StoreLeaseShorterThanStale`] when `store_lease_ms < S`.
    pub fn check_store_lease(stale_after_ms: u64, store_lease_ms: u64) -> Result<(), PolicyError> {
        if store_lease_ms < stale_after_ms {
            return Err(PolicyError::StoreLeaseShorterThanStale { store_lease_ms, stale_after_ms });
        }
        Ok(())
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
    /// 2. **`stale_after_ms > 2 * heartbeat_interval_ms`** (see
    ///    [`LeasePolicy::check_cadence`], which the job runner's options use
    ///    too). The persisted heartbeat is refreshed once per interval, so a
    ///    healthy owner's is already up to one interval old when a peer
    ///    looks; two renewals must fit in the stale window, strictly, or a
    ///    single late or failed pulse would make a live owner's run
    ///    stealable (at exactly two intervals the next renewal is due the
    ///    instant the stamp goes stale, and relation 3 then leaves a write
    ///    tolerance under one interval anyway). →
    ///    [`PolicyError::StaleAfterUnderTwoIntervals`].
    /// 3. **`write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms +
    ///    exit_grace_ms < stale_after_ms`.** The owner decides to renew or
    ///    lapse by `T + write_tolerance + interval` on its clock (the deadline
    ///    plus the one reconfirmation, bounded by an interval), and its work
    ///    has ended `exit_grace` later; a peer whose clock runs up to the skew
    ///    allowance ahead may steal once its clock passes `T + stale_after`,
    ///    i.e. when the owner's reads `T + stale_after - skew`. The whole exit
    ///    must end at least the skew allowance before a peer may steal;
    ///    strictly, so the two never share a millisecond. Broken, a peer can
    ///    take the run while the owner still works on it: the fence still
    ///    stops the stale owner's durable writes, but its other side effects
    ///    overlap the new owner's. → [`PolicyError::LapseNotBeforeSteal`].
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
        // The exit grace may be 0: a work that ends itself on its signal.
        if let Some(&(field, _)) = fields.iter().find(|(_, value)| *value == 0) {
            return Err(PolicyError::NotPositive { field });
        }
        LeasePolicy::check_cadence(self.stale_after_ms, self.heartbeat_interval_ms)?;
        let exit_bound = u128::from(self.write_tolerance_ms)
            + u128::from(self.heartbeat_interval_ms)
            + u128::from(self.skew_allowance_ms)
            + u128::from(self.exit_grace_ms);
        if exit_bound >= u128::from(self.stale_after_ms) {
            return Err(PolicyError::LapseNotBeforeSteal {
                write_tolerance_ms: self.write_tolerance_ms,
                heartbeat_interval_ms: self.heartbeat_interval_ms,
                skew_allowance_ms: self.skew_allowance_ms,
                exit_grace_ms: self.exit_grace_ms,
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
    /// Relation 2: `stale_after_ms <= 2 * heartbeat_interval_ms`: the stale
    /// window does not hold two whole renewal intervals.
    StaleAfterUnderTwoIntervals {
        /// The policy's stale-after, ms.
        stale_after_ms: u64,
        /// The policy's heartbeat interval, ms.
        heartbeat_interval_ms: u64,
    },
    /// Relation 3: `write_tolerance_ms + heartbeat_interval_ms +
    /// skew_allowance_ms + exit_grace_ms >= stale_after_ms`, so a peer could
    /// steal before the owner's work has ended.
    LapseNotBeforeSteal {
        /// The policy's write tolerance, ms.
        write_tolerance_ms: u64,
        /// The policy's heartbeat interval (the reconfirmation bound), ms.
        heartbeat_interval_ms: u64,
        /// The policy's skew allowance, ms.
        skew_allowance_ms: u64,
        /// The policy's exit grace, ms.
        exit_grace_ms: u64,
        /// The policy's stale-after, ms.
        stale_after_ms: u64,
    },
    /// [`LeasePolicy::for_runner`]: the exit grace asked for is longer than
    /// [`LeasePolicy::grace_room_ms`] leaves in the stale window. Hosts name
    /// their own options for the two spans (see
    /// [`crate::options::OptionError::GraceDoesNotFit`]).
    GraceDoesNotFit {
        /// The grace asked for, ms.
        exit_grace_ms: u64,
        /// The longest grace that fits, ms (0: none does).
        room_ms: u64,
        /// The stale window, ms.
        stale_after_ms: u64,
        /// The renewal interval, ms.
        heartbeat_interval_ms: u64,
        /// The skew allowance, ms.
        skew_allowance_ms: u64,
    },
    /// [`LeasePolicy::check_store_lease`]: the lease a store stamps on each
    /// claim and renewal is shorter than the stale window, so peers could
    /// take over an item its owner still works on.
    StoreLeaseShorterThanStale {
        /// The lease the store stamps, ms.
        store_lease_ms: u64,
        /// The stale window, ms.
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
                "lease policy: stale_after_ms ({stale_after_ms}) must be more than \
                 2 * heartbeat_interval_ms (2 * {heartbeat_interval_ms} = {}): \
                 one missed pulse would make a live owner's run stealable",
                2 * u128::from(heartbeat_interval_ms)
            ),
            PolicyError::LapseNotBeforeSteal {
                write_tolerance_ms,
                heartbeat_interval_ms,
                skew_allowance_ms,
                exit_grace_ms: 0,
                stale_after_ms,
            } => write!(
                f,
                "lease policy: write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms \
                 ({write_tolerance_ms} + {heartbeat_interval_ms} + {skew_allowance_ms} = {}) \
                 must be less than stale_after_ms ({stale_after_ms}): the owner's decision to \
                 lapse must fall at least the skew allowance before a peer may steal",
                u128::from(write_tolerance_ms) + u128::from(heartbeat_interval_ms) + u128::from(skew_allowance_ms)
            ),
            PolicyError::LapseNotBeforeSteal {
                write_tolerance_ms,
                heartbeat_interval_ms,
                skew_allowance_ms,
                exit_grace_ms,
                stale_after_ms,
            } => write!(
                f,
                "lease policy: write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms + exit_grace_ms \
                 ({write_tolerance_ms} + {heartbeat_interval_ms} + {skew_allowance_ms} + {exit_grace_ms} = {}) \
                 must be less than stale_after_ms ({stale_after_ms}): the owner's work must have ended \
                 at least the skew allowance before a peer may steal",
                u128::from(write_tolerance_ms)
                    + u128::from(heartbeat_interval_ms)
                    + u128::from(skew_allowance_ms)
                    + u128::from(exit_grace_ms)
            ),
            PolicyError::GraceDoesNotFit { exit_grace_ms, room_ms, stale_after_ms, heartbeat_interval_ms, skew_allowance_ms } => {
                write!(
                    f,
                    "lease policy: exit_grace_ms ({exit_grace_ms}) does not fit in stale_after_ms \
                     ({stale_after_ms}) with heartbeat_interval_ms ({heartbeat_interval_ms}) and \
                     skew_allowance_ms ({skew_allowance_ms}): at most {room_ms} fits"
                )
            }
            PolicyError::StoreLeaseShorterThanStale { store_lease_ms, stale_after_ms } => write!(
                f,
                "lease policy: the store's lease ({store_lease_ms}) must be at least stale_after_ms \
                 ({stale_after_ms}): a peer would take over an item its owner still works on"
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
