//! A SQLite store's lease watch of one queue: the leases its looks read,
//! timed on the callers' clock (see claim.rs, `judge_stale`, for why SQLite
//! needs one).
//!
//! Two kinds of lease are watched. A running job's lease may be taken over
//! only once the watch has seen it unrenewed for longer than its window. A
//! queued job that still carries the lease of an attempt cancelled while it
//! ran (retry.sql keeps that attempt's `expires_at`, and makes it due at
//! that end on whichever clock ran the retry) may be claimed only once the
//! watch has seen that lease unrenewed for its window as well: its owner
//! hears of the cancel only when a renewal is refused, and stops its work
//! within the window of its last confirmed renewal, so a claimant whose
//! clock reads ahead of the owner's would otherwise start it beside that
//! attempt. The core's [`LeaseWatch`] holds both rules; this module reads
//! the looks into it and words its answers as the statements take them.

use std::collections::HashMap;

use leasehold_core::Millis;
use leasehold_core::lease::{LeaseVersion, LeaseWatch};

use super::ClaimedJob;
use super::exchange::RunningLease;

/// One queue's watch.
#[derive(Debug, Default)]
pub(crate) struct QueueWatch {
    pub leases: LeaseWatch,
    /// The running jobs the last look read, and the callers' instant from
    /// which the watch will have seen each one's lease unrenewed for longer
    /// than its window.
    running: Vec<(i64, u64)>,
}

impl QueueWatch {
    /// A look read `leases` (every running lease of the queue and every
    /// cancelled attempt's lease a queued job of it carries) at `seen_at`.
    pub fn look(&mut self, leases: &[RunningLease], seen_at: Millis) {
        self.running.clear();
        for lease in leases {
            let (id, version) = (lease.id.max(0) as u64, version(lease.token, lease.heartbeat_at));
            let window = lease.lease_ms.unwrap_or(0).max(0) as u64;
            if lease.cancelled {
                self.leases.cancelled_unrenewed_for(id, version, window, seen_at.0);
                continue;
            }
            let seen = self.leases.sight(id, version, seen_at.0);
            let free_from = seen_at.0.saturating_add(window.saturating_sub(seen)).saturating_add(1);
            self.running.push((lease.id, free_from));
        }
        // The look read them all: the others ended or moved on.
        self.leases.forget_unseen_since(seen_at.0);
    }

    /// The cancelled attempts' leases seen unrenewed for their window by
    /// `now`, as claim.sql's `watched` list. The token pins each to the
    /// version watched: a job claimed, cancelled and retried again since the
    /// look carries a new one, and is not claimed until a look watches it.
    pub fn watched(&self, now: Millis) -> Vec<String> {
        self.leases.cancelled_watched(now.0).map(|(id, token)| format!("{id}:{token}")).collect()
    }

    /// The running jobs whose leases the watch will have seen unrenewed for
    /// longer than their window by `now`, as of the last look: stale
    /// candidates whatever the wall clock says (stale.sql's `watched`).
    /// Each is judged again on the lease the stale read finds.
    pub fn stale(&self, now: Millis) -> Vec<i64> {
        self.running.iter().filter(|(_, from)| now.0 >= *from).map(|(id, _)| *id).collect()
    }

    /// Sights the leases of `jobs`, which this store just claimed or took
    /// over, as stamped (their `leased_at`), at `at`: another owner sharing
    /// this store gets no head start on them.
    pub fn sight_claimed(&mut self, jobs: &[ClaimedJob], at: Millis) {
        for job in jobs {
            self.leases.sight(job.id.0.max(0) as u64, version(job.token as i64, Some(job.leased_at.0 as i64)), at.0);
        }
    }
}

/// This store's watch of `queue`, made at its first use (no key allocated
/// on the claims after).
pub(crate) fn watch_of<'w>(watches: &'w mut HashMap<String, QueueWatch>, queue: &str) -> &'w mut QueueWatch {
    if !watches.contains_key(queue) {
        watches.insert(queue.to_owned(), QueueWatch::default());
    }
    watches.get_mut(queue).expect("inserted above")
}

/// A lease as read, for the lease watch.
pub(crate) fn version(token: i64, heartbeat_at: Option<i64>) -> LeaseVersion {
    LeaseVersion { token: token.max(0) as u64, heartbeat_at: heartbeat_at.map(|h| Millis(h.max(0) as u64)) }
}
