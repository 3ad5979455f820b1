//! The simulated job store: items under fenced leases.
//!
//! - A claim takes the lowest-numbered claimable item and gives it a fresh
//!   fencing token, strictly greater than every token issued before.
//!   Claimable: pending and due, or running under a lease the claimant may
//!   take over (below). Each claim counts an attempt; the claim after the
//!   last allowed attempt dead-letters the item instead.
//! - Takeovers follow the native SQLite store's claim round
//!   (`Store::judge_stale` and `take_over.sql` in host-node), where every
//!   lease is stamped by its owner's clock. Each claim first *looks*: the
//!   claimant's [`LeaseWatch`] (the core's) sights every running lease and
//!   every cancelled attempt's lease a pending item still carries, at the
//!   claimant's monotonic clock's reading. Then an owner on another host is
//!   taken over only once that watch has seen its very lease (token and
//!   stamp) unrenewed for longer than `S`, whatever any wall clock reads
//!   (`lease-expired`); an owner on the claimant's host only once the pid
//!   probe finds it dead (`same-host-pid-dead`, proof that consults no
//!   clock: its work died with it) and its lease is stale on the claimant's
//!   clock, as the steal rules ([`steal_allowed`]) require; the claimant's
//!   own incarnation only on its own clock (the own-reclaim rule, below).
//!   The look happens where the claim lands, so the watch sees each lease
//!   as early as any real claimant could, and lets it go as early.
//! - The claimant's clock can only delay a dead same-host owner's takeover
//!   (its work died with it), but it does: on a host whose wall clock
//!   stepped, an owner started after a step back (or claimants started
//!   before a step forward) keeps its item for the step after it died, as
//!   in the real stores; the clock-steps profile on one host shows it
//!   (`dead-owner-reclaimed`) with [`Store::dead_owner_watched`] off. That
//!   rule, on as in the SQLite store, closes it: the watch may let that
//!   lease go too.
//! - With [`Store::reclaim_own_stale`] (on in every profile, as in the real
//!   stores), a claimant may also re-claim a stale item whose recorded owner
//!   is its own incarnation, on the lease alone ([`own_reclaim_allowed`]).
//! - Renew, settle and release are fenced: they land only under the item's
//!   current token (unless the `unfenced-store` mutation is on).
//! - A renewal stamps the lease with the renewal's `at` (the owner's clock at
//!   send time), never moving it backwards.
//! - The lease's end (`expires_at` in the real stores: stamp + `S`, on the
//!   owner's clock) is set by every claim and confirmed renewal, cleared
//!   when the owner gives the item back itself (a release: a failed
//!   attempt, a lapse once its work ended, a declined claim), and otherwise
//!   kept until the next claim replaces it.
//! - The operator's steering, as `cancel.sql` and `retry.sql` do it:
//!   [`Store::cancel`] of a pending or running item moves its token (so the
//!   running owner's next renewal or settle is refused) and keeps the
//!   lease's end; [`Store::retry`] of a cancelled item queues it again with
//!   a fresh attempt budget, due at the operator's `now` or at the kept
//!   lease's end, whichever is later (a claimant's clock must reach the due
//!   time). A pending item that still carries such a kept end is claimed
//!   only once the claimant's watch has also seen that cancelled lease
//!   unrenewed for longer than `S` (the core's watch, as SQLite's
//!   `claim.sql` since 5e3f6ed and the JS stores since 94fca7a): the
//!   due time is on the retrying clock, and a claimant's clock may read a
//!   step ahead of it. The `cancel-drops-lease-end` mutation drops the kept
//!   end when a *pending* item is cancelled, as the stores did before
//!   ba01e5c.

use super::probe::{owner_alive, ProcessTable};
use leasehold_core::lease::{
    check_steal, EvidenceKind, LeaseVersion, LeaseWatch, LivenessEvidence, OwnerId, StealAttempt, StealError,
};
use leasehold_core::Millis;

/// Who holds a lease, as the store records it (seed 003 `OwnerId` plus the
/// simulator's own handle on the worker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The worker slot in the simulation.
    pub worker: u8,
    /// Which incarnation of that worker (bumped on each restart).
    pub incarnation: u32,
    /// Host id.
    pub host: u8,
    /// Process id on that host.
    pub pid: u32,
    /// Process start time (for pid-reuse detection).
    pub start_time: u64,
    /// Unique per incarnation.
    pub nonce: u64,
}

/// Seed 003 `leaseLiveness`, the core's
/// [`leasehold_core::lease::lease_is_stale`] for a recorded stamp:
/// stale when more than `stale_after_ms` passed since the heartbeat (a
/// heartbeat exactly at the cutoff is live).
pub fn lease_is_stale(heartbeat_at: Millis, stale_after_ms: u64, now: Millis) -> bool {
    leasehold_core::lease::lease_is_stale(Some(heartbeat_at), stale_after_ms, now)
}

/// The core's identity of a simulated owner: its host, pid and nonce (the
/// steal rules compare hosts and nonces).
fn owner_id(owner: &Owner) -> OwnerId {
    OwnerId::new(owner.host.to_string(), owner.pid, owner.nonce.to_string())
}

/// The steal rules, as the real stores apply them: the core's
/// [`check_steal`] on the owner recorded in the snapshot, the claimant, the
/// lease's stamp and the evidence (observed at exactly `now`; a claimant
/// other than the owner; evidence that fits the host relation; a stale
/// lease whatever the evidence).
///
/// # Errors
/// The core's [`StealError`] naming the first rule that refused.
pub fn steal_allowed(
    owner: &Owner,
    claimant: &Owner,
    heartbeat_at: Millis,
    stale_after_ms: u64,
    evidence: LivenessEvidence,
    now: Millis,
) -> Result<(), StealError> {
    let (owner, claimant) = (owner_id(owner), owner_id(claimant));
    check_steal(&StealAttempt {
        owner: &owner,
        claimant: &claimant,
        heartbeat_at: Some(heartbeat_at),
        stale_after_ms,
        evidence: &evidence,
        now,
    })
}

/// The proposed own-reclaim rule: a claimant may re-claim a running item
/// whose recorded owner is its own incarnation (same nonce) once the lease
/// is stale, with no liveness probe. Its own supervision lapsed any work on
/// that lease before the lease could go stale (unless its host was stalled,
/// the same overlap a peer's takeover has, which fencing covers), so the
/// only holder left is a claim whose answer never reached it.
pub fn own_reclaim_allowed(owner: &Owner, claimant: &Owner, heartbeat_at: Millis, stale_after_ms: u64, now: Millis) -> bool {
    owner.nonce == claimant.nonce && lease_is_stale(heartbeat_at, stale_after_ms, now)
}

/// A claim's claimant, as the store meets it.
#[derive(Debug)]
pub struct Claimant<'a> {
    /// Who claims.
    pub owner: &'a Owner,
    /// The user its process runs as (the pid probe answers `EPERM` about
    /// another user's live process).
    pub uid: u8,
    /// The claim's stamp, on the claimant's clock (`now` in the real
    /// stores): due times, its own leases and a dead owner's are judged by it.
    pub at: Millis,
    /// The claimant's lease watch (one per process).
    pub watch: &'a mut LeaseWatch,
    /// The claimant's monotonic clock where the claim is applied: its watch
    /// is timed on it.
    pub mono: u64,
}

/// The lease `record` carries, as a watch tells one renewal of one holder
/// from the next: its token and its stamp.
fn version(record: &ItemRecord) -> LeaseVersion {
    LeaseVersion { token: record.token, heartbeat_at: Some(record.stamp) }
}

/// Where an item is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemState {
    /// Not enqueued yet.
    Waiting,
    /// Enqueued, not claimed.
    Pending,
    /// Claimed under a lease.
    Running,
    /// Settled (done) by the holder of a current token.
    Settled,
    /// Given up after too many attempts.
    DeadLettered,
    /// Cancelled by the operator: finished by its decision unless it
    /// retries the item ([`Store::retry`]).
    Cancelled,
}

impl ItemState {
    /// Settled, dead-lettered, or cancelled (the operator's decision, until
    /// it retries the item).
    pub fn finished(self) -> bool {
        matches!(self, ItemState::Settled | ItemState::DeadLettered | ItemState::Cancelled)
    }
}

/// One item's record.
#[derive(Clone, Copy, Debug)]
pub struct ItemRecord {
    /// Its state.
    pub state: ItemState,
    /// Claims made on it.
    pub attempts: u32,
    /// The current fencing token (0: never claimed).
    pub token: u64,
    /// The token before the current one (0: none).
    pub previous_token: u64,
    /// The persisted heartbeat of the current lease (owner's clock).
    pub stamp: Millis,
    /// The current (or last) owner.
    pub owner: Option<Owner>,
    /// Settles accepted (must end at exactly 1 unless dead-lettered).
    pub settles: u32,
    /// The lease's end (`expires_at`): the last stamp + `S` on the owner's
    /// clock, kept until a claim replaces it or the owner releases it.
    pub lease_end: Option<Millis>,
    /// When it may be claimed (`run_at`), on the claimant's clock.
    pub due: Millis,
}

impl ItemRecord {
    /// A slot not enqueued yet.
    pub const WAITING: ItemRecord = ItemRecord {
        state: ItemState::Waiting,
        attempts: 0,
        token: 0,
        previous_token: 0,
        stamp: Millis::ZERO,
        owner: None,
        settles: 0,
        lease_end: None,
        due: Millis::ZERO,
    };
}

/// A claim's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claimed {
    /// Nothing claimable.
    Empty,
    /// `item` under the fresh `token`; `stolen` names the previous owner and
    /// the evidence that justified the takeover when the item was running.
    Item {
        /// The item.
        item: u32,
        /// Its fresh fencing token.
        token: u64,
        /// The owner taken over from and the evidence, if it was running.
        stolen: Option<(Owner, EvidenceKind)>,
    },
}

/// A fenced write's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Whether it landed (seed 003 `Updated`).
    pub landed: bool,
    /// It landed with a token below the item's current one (only possible
    /// when the store is broken).
    pub below_current: bool,
}

/// The store. See the module docs.
#[derive(Clone, Debug)]
pub struct Store {
    items: Vec<ItemRecord>,
    next_token: u64,
    /// Items before this index are settled or dead-lettered.
    cursor: usize,
    stale_after_ms: u64,
    max_attempts: u32,
    unfenced: bool,
    eperm_as_dead: bool,
    /// Mutation: the probe ignores the recorded start time.
    pub start_time_ignored: bool,
    /// The own-reclaim rule ([`own_reclaim_allowed`]) is in force.
    pub reclaim_own_stale: bool,
    /// The rule (the SQLite store's) that a claimant's watch may let a dead
    /// same-host owner's lease go too ([`super::config::SimConfig::dead_owner_watched`]).
    pub dead_owner_watched: bool,
    /// Items dead-lettered so far.
    pub dead_lettered: u32,
    /// Mutation: cancelling a pending item drops the lease's end a retry
    /// kept (the stores before ba01e5c).
    pub cancel_drops_lease_end: bool,
}

impl Store {
    /// `items` items, none enqueued yet.
    pub fn new(items: u32, stale_after_ms: u64, max_attempts: u32, unfenced: bool, eperm_as_dead: bool) -> Store {
        let record = ItemRecord::WAITING;
        Store {
            items: vec![record; items as usize],
            next_token: 1,
            cursor: 0,
            stale_after_ms,
            max_attempts,
            unfenced,
            eperm_as_dead,
            start_time_ignored: false,
            reclaim_own_stale: true,
            dead_owner_watched: false,
            dead_lettered: 0,
            cancel_drops_lease_end: false,
        }
    }

    /// The record of `item`.
    pub fn item(&self, item: u32) -> &ItemRecord {
        &self.items[item as usize]
    }

    /// Every record, by item number.
    pub fn items(&self) -> &[ItemRecord] {
        &self.items
    }

    /// Adds an item slot (for the reclaim probe) and answers its number.
    pub fn add_item(&mut self) -> u32 {
        self.items.push(ItemRecord::WAITING);
        (self.items.len() - 1) as u32
    }

    /// Makes `item` claimable.
    pub fn enqueue(&mut self, item: u32) {
        let record = &mut self.items[item as usize];
        if record.state == ItemState::Waiting {
            record.state = ItemState::Pending;
        }
    }

    /// Whether every enqueued-or-waiting item is settled, dead-lettered or
    /// left cancelled by the operator.
    pub fn all_done(&self) -> bool {
        self.items[self.cursor..].iter().all(|r| r.state.finished())
    }

    /// One claim by `claimant` (see [`Claimant`]): a look that sights every
    /// lease for its watch, then the lowest-numbered claimable item. The
    /// liveness check: an owner on the claimant's host is probed by pid
    /// (alive refuses the takeover); an owner on another host is never
    /// probed, and the claimant's watch decides.
    ///
    /// `excluded`: items the claimant still holds an outcome of (settling):
    /// never claimed by it, so it never takes its own stale lease over and
    /// fences its own settle out (as the real stores' claims exclude them).
    pub fn claim(&mut self, claimant: Claimant<'_>, table: &ProcessTable, excluded: &[u32]) -> Claimed {
        while self.cursor < self.items.len()
            && matches!(self.items[self.cursor].state, ItemState::Settled | ItemState::DeadLettered)
        {
            self.cursor += 1;
        }
        let Claimant { owner: claimant, uid, at, watch, mono } = claimant;
        self.look(watch, mono);
        for index in self.cursor..self.items.len() {
            if excluded.contains(&(index as u32)) {
                continue;
            }
            let record = self.items[index];
            let stolen = match record.state {
                ItemState::Pending if record.due <= at && self.cancelled_lease_let_go(index, &record, watch, mono) => None,
                ItemState::Running => match self.takeover(index, &record, claimant, uid, at, table, watch, mono) {
                    Some(taken) => Some(taken),
                    None => continue,
                },
                _ => continue,
            };
            let record = &mut self.items[index];
            record.attempts += 1;
            if record.attempts > self.max_attempts {
                record.state = ItemState::DeadLettered;
                self.dead_lettered += 1;
                continue;
            }
            let token = self.next_token;
            self.next_token += 1;
            record.state = ItemState::Running;
            record.previous_token = record.token;
            record.token = token;
            record.stamp = at;
            record.lease_end = Some(Millis(at.0 + self.stale_after_ms));
            record.owner = Some(*claimant);
            return Claimed::Item { item: index as u32, token, stolen };
        }
        Claimed::Empty
    }

    /// The look of a claim round (SQLite's `running_leases.sql`): the
    /// watch sights every running lease and every cancelled attempt's lease
    /// a pending item carries, at the claimant's monotonic `mono`, and
    /// forgets the leases it did not see (ended, or moved on).
    fn look(&self, watch: &mut LeaseWatch, mono: u64) {
        for (index, record) in self.items.iter().enumerate().skip(self.cursor) {
            match record.state {
                ItemState::Running => {
                    watch.sight(index as u64, version(record), mono);
                }
                ItemState::Pending if record.lease_end.is_some() => {
                    self.cancelled_lease_let_go(index, record, watch, mono);
                }
                _ => {}
            }
        }
        watch.forget_unseen_since(mono);
    }

    /// Whether a pending item may be claimed as far as the lease of a
    /// cancelled attempt it carries goes: none, or one the claimant's watch
    /// has seen unrenewed for longer than `S` (the core's
    /// `LeaseWatch::cancelled_unrenewed_for`, which SQLite's `claim.sql`
    /// `?10` asks through `cancelled_watched`). Sights that lease.
    fn cancelled_lease_let_go(&self, index: usize, record: &ItemRecord, watch: &mut LeaseWatch, mono: u64) -> bool {
        record.lease_end.is_none() || watch.cancelled_unrenewed_for(index as u64, version(record), self.stale_after_ms, mono)
    }

    /// Whether `claimant` may take the running `record` (item `index`) over
    /// at `at` on its clock, `mono` on its monotonic clock, and from whom
    /// with what evidence (see the module docs).
    #[allow(clippy::too_many_arguments, reason = "the claimant's identity, user, clocks and watch, each read once")]
    fn takeover(
        &self,
        index: usize,
        record: &ItemRecord,
        claimant: &Owner,
        uid: u8,
        at: Millis,
        table: &ProcessTable,
        watch: &mut LeaseWatch,
        mono: u64,
    ) -> Option<(Owner, EvidenceKind)> {
        let owner = record.owner?;
        if owner.nonce == claimant.nonce {
            let allowed = self.reclaim_own_stale && own_reclaim_allowed(&owner, claimant, record.stamp, self.stale_after_ms, at);
            return allowed.then_some((owner, EvidenceKind::LeaseExpired));
        }
        if owner.host != claimant.host {
            // Seen unrenewed on the claimant's own clock: taken whatever the
            // wall clocks say (SQLite's `watched` takeover, which the stale
            // read names and the swap does not judge by the wall clock).
            let seen = watch.unrenewed_for(index as u64, version(record), self.stale_after_ms, mono);
            return seen.then_some((owner, EvidenceKind::LeaseExpired));
        }
        let seen = table.observe(owner.host, owner.pid, uid);
        let recorded = (!self.start_time_ignored).then_some(owner.start_time);
        if owner_alive(seen, recorded, self.eperm_as_dead) {
            return None;
        }
        // Proven gone: no watch, and the swap's wall-clock check
        // (`take_over.sql` with `?12 = 0`), as the steal rules require;
        // under the SQLite store's rule (dead_owner_watched), the watch may let it go as well.
        if self.dead_owner_watched && watch.unrenewed_for(index as u64, version(record), self.stale_after_ms, mono) {
            return Some((owner, EvidenceKind::SameHostPidDead));
        }
        let evidence = LivenessEvidence { kind: EvidenceKind::SameHostPidDead, checked_at: at };
        steal_allowed(&owner, claimant, record.stamp, self.stale_after_ms, evidence, at).ok()?;
        Some((owner, EvidenceKind::SameHostPidDead))
    }

    /// A write fenced by `token`: it lands, and `apply` changes `item`'s record, only while
    /// the item runs under that token (any token under the unfenced mutation).
    fn fenced(&mut self, item: u32, token: u64, apply: impl FnOnce(&mut ItemRecord)) -> Written {
        let record = &mut self.items[item as usize];
        let running = record.state == ItemState::Running;
        let landed = running && (token == record.token || self.unfenced);
        let written = Written { landed, below_current: landed && token < record.token };
        if landed {
            apply(record);
        }
        written
    }

    /// Renews `item`'s lease under `token`, stamping `at`.
    pub fn renew(&mut self, item: u32, token: u64, at: Millis) -> Written {
        let stale_after_ms = self.stale_after_ms;
        self.fenced(item, token, |record| {
            record.stamp = record.stamp.max(at);
            record.lease_end = Some(Millis(record.stamp.0 + stale_after_ms));
        })
    }

    /// Settles `item` under `token`.
    pub fn settle(&mut self, item: u32, token: u64) -> Written {
        self.fenced(item, token, |record| {
            record.state = ItemState::Settled;
            record.settles += 1;
        })
    }

    /// Gives `item` back (pending again) under `token`.
    pub fn release(&mut self, item: u32, token: u64) -> Written {
        self.fenced(item, token, |record| {
            record.state = ItemState::Pending;
            record.owner = None;
            // Its owner gave it back itself: no work of it holds a retry back.
            record.lease_end = None;
        })
    }

    /// The operator cancels `item` when it is pending or running
    /// (`cancel.sql`): its token moves, so a running owner's next renewal or
    /// settle is refused; the lease's end is kept (dropped for a pending
    /// item under the `cancel-drops-lease-end` mutation). Answers the token
    /// it was running under, when it was running, or `None` when nothing
    /// changed (outer `None`).
    pub fn cancel(&mut self, item: u32) -> Option<Option<u64>> {
        let token = self.next_token;
        let record = &mut self.items[item as usize];
        let was = record.state;
        if !matches!(was, ItemState::Pending | ItemState::Running) {
            return None;
        }
        self.next_token += 1;
        let running = (was == ItemState::Running).then_some(record.token);
        record.state = ItemState::Cancelled;
        record.previous_token = record.token;
        record.token = token;
        if was == ItemState::Pending && self.cancel_drops_lease_end {
            record.lease_end = None;
        }
        Some(running)
    }

    /// The operator retries the cancelled `item` (`retry.sql`) at `now` on
    /// its clock: pending again with a fresh attempt budget, due at `now` or
    /// at the kept lease's end, whichever is later (the cancelled attempt's
    /// owner may work until then). Answers the due time, or `None` when the
    /// item was not cancelled.
    pub fn retry(&mut self, item: u32, now: Millis) -> Option<Millis> {
        let record = &mut self.items[item as usize];
        if record.state != ItemState::Cancelled {
            return None;
        }
        record.state = ItemState::Pending;
        record.attempts = 0;
        record.due = record.lease_end.map_or(now, |end| end.max(now));
        Some(record.due)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn owner(worker: u8, host: u8, nonce: u64) -> Owner {
        Owner { worker, incarnation: 0, host, pid: 0, start_time: 0, nonce }
    }

    /// A store of one waiting item (item 0), stale after 100 ms.
    fn one_item(max_attempts: u32, unfenced: bool) -> Store {
        let mut store = Store::new(1, 100, max_attempts, unfenced, false);
        store.enqueue(0);
        store
    }

    /// Each claimant's lease watch, by nonce (one per process).
    #[derive(Default)]
    struct Watches(Vec<(u64, LeaseWatch)>);

    impl Watches {
        /// A claim by `who` (user `uid`) at `at`, read on both its clocks
        /// (its wall clock and its monotonic clock agree here), through its
        /// own watch.
        fn claim(&mut self, store: &mut Store, who: &Owner, uid: u8, at: u64, table: &ProcessTable, excluded: &[u32]) -> Claimed {
            let at_index = match self.0.iter().position(|(nonce, _)| *nonce == who.nonce) {
                Some(i) => i,
                None => {
                    self.0.push((who.nonce, LeaseWatch::new()));
                    self.0.len() - 1
                }
            };
            let watch = &mut self.0[at_index].1;
            store.claim(Claimant { owner: who, uid, at: Millis(at), watch, mono: at }, table, excluded)
        }
    }

    /// [`one_item`] (5 attempts) claimed at t=1000 by `a` (worker 0 on
    /// host 0), and `b` (worker 1 on host 1) to take it over, which looks
    /// at the fresh lease at once: the process table, the store, `a`, `b`,
    /// their watches.
    fn claimed_by_a(unfenced: bool) -> (ProcessTable, Store, Owner, Owner, Watches) {
        claimed_at(1_000, 1_000, unfenced)
    }

    /// [`claimed_by_a`] with `a`'s claim at `a_at` on its clock and `b`'s
    /// first look at `b_at` on its own.
    fn claimed_at(a_at: u64, b_at: u64, unfenced: bool) -> (ProcessTable, Store, Owner, Owner, Watches) {
        let table = ProcessTable::new();
        let mut store = one_item(5, unfenced);
        let (a, b) = (owner(0, 0, 1), owner(1, 1, 2));
        let mut w = Watches::default();
        w.claim(&mut store, &a, 0, a_at, &table, &[]);
        assert_eq!(w.claim(&mut store, &b, 0, b_at, &table, &[]), Claimed::Empty);
        (table, store, a, b, w)
    }

    /// The second claim of item 0 (token 2), taken over from `from` on `evidence`.
    fn stolen_second(from: Owner, evidence: EvidenceKind) -> Claimed {
        Claimed::Item { item: 0, token: 2, stolen: Some((from, evidence)) }
    }

    fn worker_process(table: &mut ProcessTable, worker: u8, host: u8, uid: u8) -> Owner {
        let pid = table.spawn(host, uid, 7, false);
        Owner { worker, incarnation: 0, host, pid, start_time: 7, nonce: u64::from(worker) + 1 }
    }

    #[test]
    fn claims_hand_out_strictly_growing_tokens_in_item_order() {
        let mut w = Watches::default();
        let table = ProcessTable::new();
        let mut store = Store::new(3, 100, 5, false, false);
        (0..3).for_each(|i| store.enqueue(i));
        let a = owner(0, 0, 1);
        let first = w.claim(&mut store, &a, 0, 1_000, &table, &[]);
        let second = w.claim(&mut store, &a, 0, 1_000, &table, &[]);
        assert_eq!(first, Claimed::Item { item: 0, token: 1, stolen: None });
        assert_eq!(second, Claimed::Item { item: 1, token: 2, stolen: None });
    }

    #[test]
    fn another_hosts_lease_is_taken_over_once_the_claimants_watch_saw_it_unrenewed_for_more_than_the_window() {
        let (table, mut store, a, b, mut w) = claimed_by_a(false);
        assert_eq!(w.claim(&mut store, &b, 0, 1_100, &table, &[]), Claimed::Empty);
        assert_eq!(w.claim(&mut store, &b, 0, 1_101, &table, &[]), stolen_second(a, EvidenceKind::LeaseExpired));
    }

    #[test]
    fn a_lease_first_seen_is_not_taken_over_however_old_its_stamp_reads_on_the_claimants_clock() {
        // `b`'s clock reads a whole step ahead of `a`'s: on it, `a`'s lease
        // expired long ago; `b` has seen it for no time at all.
        let (table, mut store, a, b, mut w) = claimed_at(1_000, 3_601_000, false);
        assert!(store.renew(0, 1, Millis(1_050)).landed, "renewed: watched anew");
        assert_eq!(w.claim(&mut store, &b, 0, 3_601_100, &table, &[]), Claimed::Empty);
        assert_eq!(w.claim(&mut store, &b, 0, 3_601_200, &table, &[]), Claimed::Empty);
        assert_eq!(w.claim(&mut store, &b, 0, 3_601_201, &table, &[]), stolen_second(a, EvidenceKind::LeaseExpired));
    }

    #[test]
    fn a_dead_owners_lease_stamped_ahead_of_the_claimants_clock_is_taken_over_once_watched() {
        // The other way round: `a`'s clock reads ahead, its lease expires
        // on `b`'s clock only a step later; the watch does not wait for it.
        let (table, mut store, a, b, mut w) = claimed_at(3_600_000, 1_000, false);
        assert_eq!(w.claim(&mut store, &b, 0, 1_101, &table, &[]), stolen_second(a, EvidenceKind::LeaseExpired));
    }

    #[test]
    fn renew_and_settle_land_only_under_the_current_token() {
        let (table, mut store, _, b, mut w) = claimed_by_a(false);
        assert!(store.renew(0, 1, Millis(1_050)).landed);
        assert_eq!(w.claim(&mut store, &b, 0, 1_050, &table, &[]), Claimed::Empty);
        w.claim(&mut store, &b, 0, 1_151, &table, &[]);
        assert!(!store.renew(0, 1, Millis(1_160)).landed);
        assert!(!store.settle(0, 1).landed);
        assert!(store.settle(0, 2).landed);
        assert_eq!(store.item(0).settles, 1);
    }

    #[test]
    fn the_unfenced_mutation_lands_a_stale_token_and_says_so() {
        let (table, mut store, _, b, mut w) = claimed_by_a(true);
        w.claim(&mut store, &b, 0, 1_101, &table, &[]);
        assert_eq!(store.settle(0, 1), Written { landed: true, below_current: true });
    }

    #[test]
    fn a_live_same_host_owner_is_never_stolen_from_but_a_dead_one_is() {
        let mut w = Watches::default();
        let mut table = ProcessTable::new();
        let mut store = one_item(5, false);
        let a = worker_process(&mut table, 0, 0, 1);
        let b = worker_process(&mut table, 1, 0, 2);
        w.claim(&mut store, &a, 1, 1_000, &table, &[]);
        // EPERM (another user's live process) is alive: refused.
        assert_eq!(w.claim(&mut store, &b, 2, 5_000, &table, &[]), Claimed::Empty);
        table.exit(0, a.pid, false);
        assert_eq!(w.claim(&mut store, &b, 2, 5_000, &table, &[]), stolen_second(a, EvidenceKind::SameHostPidDead));
    }

    #[test]
    fn the_claim_after_the_last_attempt_dead_letters_the_item() {
        let mut w = Watches::default();
        let table = ProcessTable::new();
        let mut store = one_item(2, false);
        let a = owner(0, 0, 1);
        w.claim(&mut store, &a, 0, 1_000, &table, &[]);
        store.release(0, 1);
        w.claim(&mut store, &a, 0, 1_000, &table, &[]);
        store.release(0, 2);
        assert_eq!(w.claim(&mut store, &a, 0, 1_000, &table, &[]), Claimed::Empty);
        assert_eq!(store.item(0).state, ItemState::DeadLettered);
        assert!(store.all_done());
    }

    #[test]
    fn an_owner_re_claims_its_own_stale_item_only_under_the_own_reclaim_rule() {
        let mut table = ProcessTable::new();
        let a = worker_process(&mut table, 0, 0, 1);
        for rule in [false, true] {
            let mut store = Store::new(1, 100, 5, false, false);
            let mut w = Watches::default();
            store.reclaim_own_stale = rule;
            store.enqueue(0);
            w.claim(&mut store, &a, 1, 1_000, &table, &[]);
            // Never while the lease is fresh, whatever the rule.
            assert_eq!(w.claim(&mut store, &a, 1, 1_100, &table, &[]), Claimed::Empty);
            let stale = w.claim(&mut store, &a, 1, 1_101, &table, &[]);
            if rule {
                assert_eq!(stale, Claimed::Item { item: 0, token: 2, stolen: Some((a, EvidenceKind::LeaseExpired)) });
            } else {
                assert_eq!(stale, Claimed::Empty, "the live owner's pid probe and ClaimantIsOwner both refuse");
            }
        }
    }

    #[test]
    fn a_claimant_never_claims_an_item_it_holds_an_outcome_of() {
        let mut w = Watches::default();
        let mut table = ProcessTable::new();
        let a = worker_process(&mut table, 0, 0, 0);
        let mut store = Store::new(2, 100, 5, false, false);
        store.enqueue(0);
        store.enqueue(1);
        w.claim(&mut store, &a, 0, 1_000, &table, &[]);
        // Its own lease on item 0 is stale, but it still settles item 0.
        assert_eq!(w.claim(&mut store, &a, 0, 1_200, &table, &[0]), Claimed::Item { item: 1, token: 2, stolen: None });
        assert!(matches!(w.claim(&mut store, &a, 0, 1_200, &table, &[]), Claimed::Item { item: 0, .. }));
    }

    #[test]
    fn a_cancel_moves_the_fence_and_a_retry_waits_for_the_cancelled_attempts_lease_end() {
        let (table, mut store, a, b, mut w) = claimed_by_a(false);
        assert!(store.renew(0, 1, Millis(1_050)).landed);
        assert_eq!(store.cancel(0), Some(Some(1)), "it was running under token 1");
        assert_eq!(store.item(0).state, ItemState::Cancelled);
        assert!(!store.renew(0, 1, Millis(1_060)).landed, "the owner's next renewal is refused");
        assert!(!store.settle(0, 1).landed);
        assert_eq!(w.claim(&mut store, &b, 0, 1_060, &table, &[]), Claimed::Empty, "cancelled: not claimable");
        // Retried at 1 070: due at the lease's end, 1 050 + 100.
        assert_eq!(store.retry(0, Millis(1_070)), Some(Millis(1_150)));
        assert_eq!(store.item(0).attempts, 0, "a fresh attempt budget");
        assert_eq!(w.claim(&mut store, &b, 0, 1_149, &table, &[]), Claimed::Empty);
        // Cancelled again while it waits, and retried: still due at 1 150.
        assert_eq!(store.cancel(0), Some(None));
        assert_eq!(store.retry(0, Millis(1_080)), Some(Millis(1_150)));
        assert_eq!(w.claim(&mut store, &b, 0, 1_149, &table, &[]), Claimed::Empty);
        // Due, but `b`'s watch has seen that cancelled lease (token 3) only
        // since 1 149.
        assert_eq!(w.claim(&mut store, &b, 0, 1_150, &table, &[]), Claimed::Empty);
        assert_eq!(w.claim(&mut store, &b, 0, 1_249, &table, &[]), Claimed::Empty);
        assert_eq!(w.claim(&mut store, &b, 0, 1_250, &table, &[]), Claimed::Item { item: 0, token: 4, stolen: None });
        let _ = a;
    }

    #[test]
    fn a_claimant_whose_clock_reads_ahead_waits_for_its_watch_of_the_cancelled_lease() {
        let (table, mut store, _, b, mut w) = claimed_by_a(false);
        store.cancel(0);
        assert_eq!(store.retry(0, Millis(1_010)), Some(Millis(1_100)));
        // Due at once on `b`'s clock, a step ahead: it waits the window from
        // its first sight of the cancelled lease, as for a takeover.
        assert_eq!(w.claim(&mut store, &b, 0, 3_601_000, &table, &[]), Claimed::Empty);
        assert_eq!(w.claim(&mut store, &b, 0, 3_601_100, &table, &[]), Claimed::Empty);
        assert!(matches!(w.claim(&mut store, &b, 0, 3_601_101, &table, &[]), Claimed::Item { item: 0, .. }));
    }

    #[test]
    fn the_cancel_drops_lease_end_mutation_makes_a_second_retry_due_at_once() {
        let (table, mut store, _, b, mut w) = claimed_by_a(false);
        store.cancel_drops_lease_end = true;
        assert_eq!(store.cancel(0), Some(Some(1)));
        assert_eq!(store.retry(0, Millis(1_010)), Some(Millis(1_100)), "the first retry still waits");
        store.cancel(0);
        assert_eq!(store.retry(0, Millis(1_020)), Some(Millis(1_020)), "the kept end was dropped");
        assert!(matches!(w.claim(&mut store, &b, 0, 1_020, &table, &[]), Claimed::Item { item: 0, .. }));
    }

    #[test]
    fn an_item_its_owner_gave_back_is_due_at_once_when_retried() {
        let (table, mut store, a, _, mut w) = claimed_by_a(false);
        assert!(store.release(0, 1).landed, "a failed attempt, settled by its owner");
        assert_eq!(store.item(0).lease_end, None);
        store.cancel(0);
        assert_eq!(store.retry(0, Millis(1_010)), Some(Millis(1_010)));
        assert!(matches!(w.claim(&mut store, &a, 0, 1_010, &table, &[]), Claimed::Item { item: 0, .. }));
        assert_eq!(store.retry(0, Millis(1_020)), None, "only a cancelled item is retried");
        store.settle(0, store.item(0).token);
        assert_eq!(store.cancel(0), None, "a settled item is not cancelled");
    }

    #[test]
    fn steal_rules_refuse_in_the_documented_order() {
        let (a, b) = (owner(0, 0, 1), owner(1, 1, 2));
        let at = Millis(10_000);
        let old = Millis(1_000);
        let evidence = |kind, checked_at| LivenessEvidence { kind, checked_at };
        let lease = EvidenceKind::LeaseExpired;
        let pid = EvidenceKind::SameHostPidDead;
        let refused = |result: Result<(), StealError>| result.unwrap_err();
        assert!(matches!(refused(steal_allowed(&a, &b, old, 100, evidence(lease, Millis(9_999)), at)), StealError::EvidenceNotFresh { .. }));
        assert_eq!(refused(steal_allowed(&a, &a, old, 100, evidence(lease, at), at)), StealError::ClaimantIsOwner);
        assert_eq!(refused(steal_allowed(&a, &b, old, 100, evidence(pid, at), at)), StealError::PidEvidenceFromOtherHost);
        assert!(matches!(refused(steal_allowed(&a, &b, Millis(9_900), 100, evidence(lease, at), at)), StealError::LeaseNotStale { .. }));
        assert_eq!(steal_allowed(&a, &b, Millis(9_899), 100, evidence(lease, at), at), Ok(()));
    }
}
