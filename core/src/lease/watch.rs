//! The takeover rule measured on the claimant's own monotonic clock.
//!
//! A lease's stamps are wall-clock readings (the owner's, or the database's),
//! and a lease is judged stale against another wall-clock reading. A wall
//! clock can step: an NTP correction, a clock set by hand, a machine or a
//! browser tab resumed from sleep (the monotonic clocks that time the owner's
//! own deadlines stand still while suspended, the wall clock does not). A
//! forward step longer than the stale window makes every running lease look
//! stale at once, while every owner still works inside its deadline: judged
//! on the wall clock alone, a claimant would take each job over beside its
//! owner until the owner's next renewal.
//!
//! [`LeaseWatch`] closes that: a claimant takes a lease over only after it has
//! itself seen that very lease (the same fencing token and the same recorded
//! heartbeat) unrenewed for longer than the lease's stale window, timed on
//! its own monotonic clock. Why that is enough, whatever any wall clock did:
//! the owner sent the renewal that wrote this heartbeat before the claimant
//! could read it, and the owner stops its work within the stale window of
//! sending its last confirmed renewal (the lease policy's relation
//! `W + I + K + G < S`); monotonic clocks on one machine run at one rate, and
//! across machines their drift over one window is far inside the skew
//! allowance. A renewal changes the heartbeat and starts the watch again; an
//! owner that has died leaves it unchanged, and is taken over one window
//! after the claimant first saw its last renewal.
//!
//! The same rule guards a second kind of lease: that of an attempt
//! cancelled while it ran, which its job keeps once retried, queued again
//! and due at that lease's end (a wall-clock reading, the owner's or the
//! database's): the owner hears of a cancel only from a notice or its next
//! renewal, and stops its work only by its lease's end on its monotonic
//! clock. A claimant whose wall clock reads a step ahead would find that due
//! time past and start the job beside the attempt still working, so it
//! claims the job only once it has seen that lease unrenewed for longer than
//! its window, as for a takeover ([`LeaseWatch::cancelled_unrenewed_for`],
//! [`LeaseWatch::cancelled_watched`]). The same reasoning holds: the owner's
//! last confirmed renewal was sent before the claimant first read the
//! lease it wrote. A queued job's token pins that lease (no renewal lands on
//! a queued job, and every claim or cancel moves the token), so a claim
//! naming the token watched cannot take a later attempt's.
//!
//! A host may apply the wall-clock judgement ([`super::lease_is_stale`]) on
//! top, so that the watch only ever makes a takeover later, or let the watch
//! alone decide (the native SQLite store does: an owner whose wall clock
//! reads ahead of the claimant's would otherwise keep a dead owner's job for
//! as long as its clock is ahead). It costs nothing when the
//! claimant reads every running lease at each look (it then sees each
//! renewal soon after it lands); a store that names only leases already
//! stale on the wall clock pays up to one more window before a dead owner's
//! job is taken over.

use alloc::vec::Vec;

use crate::Millis;

/// One lease as a claimant read it: which renewal of which holder it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseVersion {
    /// The job's fencing token: a new claim or takeover changes it.
    pub token: u64,
    /// The heartbeat the store recorded, in whatever clock stamped it
    /// (`None`: none recorded). Only compared for equality, never with a
    /// clock, so a stepped clock cannot move it.
    pub heartbeat_at: Option<Millis>,
}

#[derive(Clone, Copy, Debug)]
struct Sighting {
    id: u64,
    version: LeaseVersion,
    /// Claimant's monotonic ms when this version was first seen.
    since: u64,
    /// Claimant's monotonic ms when it was last seen.
    last: u64,
    /// `Some(window)` for the lease of an attempt cancelled while it ran,
    /// carried by its job queued again, with that lease's stale window.
    cancelled: Option<u64>,
}

/// A deliberately broken watch, for the simulator's mutation check only
/// (cargo feature `mutations`, off by default and test-only): the simulator
/// must catch it; nothing else may set one.
#[cfg(feature = "mutations")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WatchMutation {
    /// The correct watch.
    #[default]
    None,
    /// BROKEN: a lease counts as seen unrenewed since its recorded
    /// heartbeat, read on the caller's clock, instead of since this watch
    /// first saw it: the wall-clock judgement the watch replaced, for a host
    /// whose watch is fed the clock that stamps its leases (the native
    /// runner's). A claimant whose clock reads a step ahead takes over
    /// every lease at once, and claims at once every retried job that
    /// carries a cancelled attempt's lease.
    FromHeartbeat,
}

/// A claimant's memory of the leases it has seen, keyed by job id. One
/// watch per claimant and queue, fed from one monotonic clock (ms, any
/// origin, never stepping: `Instant`, `performance.now()`).
///
/// Memory: one entry per lease seen (a running job's, or a cancelled
/// attempt's its queued job carries) and not yet forgotten
/// ([`LeaseWatch::forget_unseen_since`]).
#[derive(Clone, Debug, Default)]
pub struct LeaseWatch {
    /// Sorted by id. A sorted `Vec`, not a `BTreeMap`: a claimant watches
    /// its queue's running jobs (tens to thousands), and the map's code
    /// would weigh several KiB in the browser's WebAssembly module.
    seen: Vec<Sighting>,
    #[cfg(feature = "mutations")]
    mutation: WatchMutation,
}

impl LeaseWatch {
    /// An empty watch: no lease has been seen yet, so none may be taken over
    /// until it has been watched for its window.
    #[must_use]
    pub fn new() -> LeaseWatch {
        LeaseWatch::default()
    }

    /// MUTATION CHECK ONLY (feature `mutations`): answer as a deliberately
    /// broken watch from now on.
    #[cfg(feature = "mutations")]
    pub fn set_mutation(&mut self, mutation: WatchMutation) {
        self.mutation = mutation;
    }

    /// Records that job `id`'s lease read as `version` at the claimant's
    /// monotonic `now_ms`, and answers for how many ms this claimant has seen
    /// that very version (0 at its first sighting). A new version, or a clock
    /// reading earlier than the first sighting, starts the count again.
    pub fn sight(&mut self, id: u64, version: LeaseVersion, now_ms: u64) -> u64 {
        self.record(id, version, now_ms, None)
    }

    /// [`LeaseWatch::sight`] of a running lease (`cancelled: None`) or of
    /// a cancelled attempt's lease with its window.
    fn record(&mut self, id: u64, version: LeaseVersion, now_ms: u64, cancelled: Option<u64>) -> u64 {
        let fresh = Sighting { id, version, since: now_ms, last: now_ms, cancelled };
        let entry = match self.seen.binary_search_by_key(&id, |s| s.id) {
            Ok(at) => &mut self.seen[at],
            Err(at) => {
                self.seen.insert(at, fresh);
                &mut self.seen[at]
            }
        };
        if entry.version != version || now_ms < entry.since {
            *entry = fresh;
        }
        entry.last = now_ms;
        entry.cancelled = cancelled;
        let seen = *entry;
        self.unrenewed_ms(&seen, now_ms)
    }

    /// For how long `seen` counts as unrenewed at the monotonic `now_ms`:
    /// since this watch first saw that version.
    fn unrenewed_ms(&self, seen: &Sighting, now_ms: u64) -> u64 {
        #[cfg(feature = "mutations")]
        if self.mutation == WatchMutation::FromHeartbeat {
            return seen.version.heartbeat_at.map_or(u64::MAX, |beat| now_ms.saturating_sub(beat.0));
        }
        now_ms.saturating_sub(seen.since)
    }

    /// Records the sighting ([`LeaseWatch::sight`]) and answers whether the
    /// lease may be taken over: seen unrenewed for more than its stale window
    /// `stale_after_ms` (the owner's, as recorded with the lease). Whether
    /// the wall clock must call it stale too is the caller's choice (see the
    /// module docs).
    pub fn unrenewed_for(&mut self, id: u64, version: LeaseVersion, stale_after_ms: u64, now_ms: u64) -> bool {
        self.sight(id, version, now_ms) > stale_after_ms
    }

    /// Records that job `id`, queued again after a cancel while it ran,
    /// still carries that attempt's lease, read as `version` (the token the
    /// job carries now, and the attempt's last recorded heartbeat) with the
    /// attempt's stale window `stale_after_ms`, at the monotonic `now_ms`;
    /// answers whether the job may be claimed now: that lease seen
    /// unrenewed for more than its window (see the module docs).
    pub fn cancelled_unrenewed_for(&mut self, id: u64, version: LeaseVersion, stale_after_ms: u64, now_ms: u64) -> bool {
        self.record(id, version, now_ms, Some(stale_after_ms)) > stale_after_ms
    }

    /// The cancelled attempts' leases this watch will have seen unrenewed
    /// for more than their window by the monotonic `now_ms`, as of its last
    /// sightings: each as (job id, token), the jobs a claim may take now for
    /// a host that reads these leases less often than it claims. A job
    /// claimed, cancelled and retried again since that sighting carries
    /// another token, and waits until one is watched.
    pub fn cancelled_watched(&self, now_ms: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.seen.iter().filter_map(move |s| {
            let window = s.cancelled?;
            (self.unrenewed_ms(s, now_ms) > window).then_some((s.id, s.version.token))
        })
    }

    /// Forgets every lease last seen before the monotonic `since_ms`: after a
    /// look that read every running lease, the jobs it did not see have
    /// ended or moved on, and a job seen again later starts a new watch.
    pub fn forget_unseen_since(&mut self, since_ms: u64) {
        self.seen.retain(|s| s.last >= since_ms);
    }

    /// How many leases the watch remembers.
    #[must_use]
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether it remembers none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: u64 = 6_000;

    fn version(token: u64, beat: u64) -> LeaseVersion {
        LeaseVersion { token, heartbeat_at: Some(Millis(beat)) }
    }

    #[test]
    fn a_lease_first_seen_is_not_taken_over_however_old_its_stamp() {
        // The stamp says an hour ago (a clock stepped forward): the
        // claimant has seen it for no time at all.
        let mut watch = LeaseWatch::new();
        assert!(!watch.unrenewed_for(1, version(3, 0), WINDOW, 3_600_000));
    }

    #[test]
    fn the_same_version_is_taken_over_only_once_seen_for_more_than_the_window() {
        let mut watch = LeaseWatch::new();
        assert!(!watch.unrenewed_for(1, version(3, 100), WINDOW, 1_000));
        assert!(!watch.unrenewed_for(1, version(3, 100), WINDOW, 1_000 + WINDOW));
        assert!(watch.unrenewed_for(1, version(3, 100), WINDOW, 1_001 + WINDOW));
    }

    #[test]
    fn a_renewal_or_a_new_token_starts_the_watch_again() {
        let mut watch = LeaseWatch::new();
        watch.sight(1, version(3, 100), 0);
        assert_eq!(watch.sight(1, version(3, 2_100), 5_000), 0, "renewed");
        assert!(!watch.unrenewed_for(1, version(3, 2_100), WINDOW, 5_000 + WINDOW));
        assert_eq!(watch.sight(1, version(4, 2_100), 20_000), 0, "claimed again, same stamp");
        assert_eq!(watch.sight(1, version(4, 2_100), 20_500), 500);
    }

    #[test]
    fn a_heartbeat_that_steps_back_is_a_new_version_too() {
        // A renewal stamped by a clock that stepped back reads older than
        // the last: still a renewal.
        let mut watch = LeaseWatch::new();
        watch.sight(1, version(3, 10_000), 0);
        assert_eq!(watch.sight(1, version(3, 4_000), 7_000), 0);
    }

    #[test]
    fn jobs_are_watched_apart_and_unseen_ones_forgotten() {
        let mut watch = LeaseWatch::new();
        watch.sight(1, version(1, 0), 0);
        watch.sight(2, version(1, 0), 0);
        watch.sight(1, version(1, 0), 1_000);
        watch.forget_unseen_since(1_000);
        assert_eq!(watch.len(), 1);
        assert_eq!(watch.sight(2, version(1, 0), 9_000), 0, "forgotten: watched anew");
        assert_eq!(watch.sight(1, version(1, 0), 9_000), 9_000);
    }

    #[cfg(feature = "mutations")]
    #[test]
    fn the_from_heartbeat_mutation_times_a_lease_from_its_stamp_on_the_callers_clock() {
        let mut watch = LeaseWatch::new();
        watch.set_mutation(WatchMutation::FromHeartbeat);
        // First seen, but stamped an hour before this clock's reading:
        // taken over at once, as the wall clock alone would.
        assert!(watch.unrenewed_for(1, version(3, 0), WINDOW, 3_600_000));
        assert!(!watch.unrenewed_for(2, version(3, 3_600_000 - WINDOW), WINDOW, 3_600_000));
        // A cancelled attempt's lease alike, however it is asked.
        assert!(watch.cancelled_unrenewed_for(3, version(4, 0), WINDOW, 3_600_000));
        assert_eq!(watch.cancelled_watched(3_600_000).collect::<Vec<_>>(), [(3, 4)]);
    }

    #[test]
    fn a_cancelled_lease_is_let_go_once_watched_for_its_window_and_only_under_its_token() {
        let mut watch = LeaseWatch::new();
        // Claim 3 renewed at 100, cancelled (token 4), retried: due at once on a stepped clock.
        assert!(!watch.cancelled_unrenewed_for(1, version(4, 100), WINDOW, 1_000));
        assert_eq!(watch.cancelled_watched(1_000 + WINDOW).count(), 0, "seen for the window, not more");
        assert!(watch.cancelled_unrenewed_for(1, version(4, 100), WINDOW, 1_001 + WINDOW));
        // Between two looks: let go from the first sighting on, under the token seen.
        let mut later = LeaseWatch::new();
        later.cancelled_unrenewed_for(1, version(4, 100), WINDOW, 1_000);
        later.sight(2, version(1, 100), 1_000);
        assert_eq!(later.cancelled_watched(1_001 + WINDOW).collect::<Vec<_>>(), [(1, 4)], "the running lease is not one");
        // Claimed and cancelled again since (token 6): watched anew.
        assert!(!later.cancelled_unrenewed_for(1, version(6, 9_000), WINDOW, 9_000));
        assert_eq!(later.cancelled_watched(9_000 + WINDOW).count(), 0);
    }

    #[test]
    fn a_job_seen_running_again_is_no_cancelled_lease() {
        let mut watch = LeaseWatch::new();
        watch.cancelled_unrenewed_for(1, version(4, 100), WINDOW, 0);
        watch.sight(1, version(5, 20_000), 1);
        assert_eq!(watch.cancelled_watched(100_000).count(), 0);
    }

    #[test]
    fn no_heartbeat_is_a_version_like_any_other() {
        let mut watch = LeaseWatch::new();
        let none = LeaseVersion { token: 1, heartbeat_at: None };
        watch.sight(1, none, 0);
        assert!(watch.unrenewed_for(1, none, WINDOW, WINDOW + 1));
    }
}
