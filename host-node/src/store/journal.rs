//! The settlements journal: every settled attempt, appended by the statement
//! (PostgreSQL) or transaction (SQLite) that settles it, so the store's
//! durable records are the source of job events — a worker killed right
//! after its commit loses none — and read back in commit order with a
//! watermark ([`JournalCursor`]), as the event pump derives from journals:
//! each row once, none skipped.
//!
//! # Commit order
//!
//! A reader that remembers the highest id it saw skips any row that takes a
//! lower id but commits later. On SQLite that cannot happen: writers take
//! turns on the file, each assigns its ids under the write lock and commits
//! before the next may write, so ids commit in order and the watermark is
//! the last id read.
//!
//! On PostgreSQL ids are taken from a sequence as statements run and commit
//! in any order. Each row records the 64-bit id of the transaction that
//! wrote it (`xid`), and a reader reads under a snapshot whose `xmin`
//! (`pg_snapshot_xmin(pg_current_snapshot())`) is the oldest transaction
//! still running: every transaction below it has ended, so every row with
//! `xid < xmin` that will ever exist is visible, now and at every later read.
//! The watermark is that `xmin`. Each read takes the rows with `xid` at or
//! above the last `xmin` (the ones written since, plus those of transactions
//! that were running then): those below its own `xmin` are final, and once
//! handed out are never read again; those at or above it are handed out now
//! too (no waiting for an unrelated long transaction to end) and remembered
//! by id until the watermark passes them, so the next reads, which see them
//! again, do not hand them out twice. A transaction left open elsewhere on
//! the server holds `xmin` back: reads then re-read the rows written since,
//! without handing any out twice, until it ends. (The alternative, one lock
//! that every settle takes to append in id order, would serialise the settles
//! of all workers on one row.)

use std::collections::BTreeSet;

use leasehold_core::Millis;
use leasehold_core::lease::OwnerId;

use super::rows::DecodeRow;
use super::validate::{unsigned, unsigned32};
use super::{JobId, Store, StoreError, StoreResult};

const TABLE: &str = "leasehold_settlements";

/// How an attempt was settled ([`SettlementRecord::outcome`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettlementOutcome {
    /// Completed (the job succeeded; kept, or deleted under
    /// [`super::OnSuccess::Delete`]).
    Done,
    /// Failed with attempts left: queued again, due at `at` (ms since the
    /// Unix epoch).
    Retrying {
        /// The retry's due time.
        at: Millis,
    },
    /// Failed on its last attempt (or its lease was lost on the last one):
    /// dead-lettered.
    DeadLettered,
    /// Its lease was taken over by another claimant (reclaimed once stale,
    /// or stolen with evidence); the owner named is the one that lost it.
    Lost,
    /// Handed back unstarted: queued again at once, the attempt not counted.
    Released,
    /// Cancelled by an operator ([`Store::cancel`]); the error says who and
    /// why. A queued job's cancel is journaled too (no owner then).
    Cancelled,
}

impl SettlementOutcome {
    /// The event type `leasehold events` shows it as: `job-done`,
    /// `job-retrying`, `job-dead-lettered`, `job-lost`, `job-released`,
    /// `job-cancelled`.
    pub fn event_type(self) -> &'static str {
        match self {
            SettlementOutcome::Done => "job-done",
            SettlementOutcome::Retrying { .. } => "job-retrying",
            SettlementOutcome::DeadLettered => "job-dead-lettered",
            SettlementOutcome::Lost => "job-lost",
            SettlementOutcome::Released => "job-released",
            SettlementOutcome::Cancelled => "job-cancelled",
        }
    }
}

/// One row of the settlements journal ([`Store::settlements`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettlementRecord {
    /// The row's id in the journal (unique; on PostgreSQL not in commit
    /// order).
    pub id: i64,
    /// The job (which may since have been deleted).
    pub job: JobId,
    /// Its queue.
    pub queue: String,
    /// The attempt the settlement ended, numbered as the job's attempt log
    /// ([`JobRecord::attempt_log`](super::JobRecord::attempt_log)) and
    /// `leasehold show` number it: its place among the job's attempts by
    /// fencing token, from 1, the attempts before a [`Store::retry`]
    /// counted too (the attempt of the job's budget, which a retry starts
    /// again from 1, is what a handler sees as [`ClaimedJob::attempt`](super::ClaimedJob::attempt)).
    /// For a job deleted since (purged, or deleted on success), whose log is
    /// gone, the attempt of its budget it was settled under. `None` for a
    /// settlement that ended no attempt: a claim handed back unstarted
    /// ([`SettlementOutcome::Released`]), a cancel of a job that was not
    /// running.
    pub attempt: Option<u32>,
    /// That attempt's fencing token.
    pub token: u64,
    /// Who held the attempt (host, pid, nonce; no start time or boot id).
    pub owner: Option<OwnerId>,
    /// How it was settled.
    pub outcome: SettlementOutcome,
    /// The failure's error, or for a lost lease who took it over.
    pub error: Option<String>,
    /// When it was settled, ms since the Unix epoch (PostgreSQL: the
    /// server's clock; SQLite: the settling caller's).
    pub at: Millis,
}

/// Where a reader of the journal stands ([`Store::settlements`]): each call
/// with the same cursor answers the rows committed since the last, each row
/// once and none skipped (see the module docs for how, on PostgreSQL).
/// `Default` starts at the journal's beginning. Keep one cursor per store:
/// a SQLite cursor means nothing to PostgreSQL and the reverse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JournalCursor {
    /// SQLite: the last id handed out.
    pub(crate) after_id: i64,
    /// Rows with a lower id are never answered (a reader that has them
    /// already: [`JournalCursor::from_id`]).
    pub(crate) min_id: i64,
    /// PostgreSQL: the `xmin` of the last read.
    pub(crate) xmin: u64,
    /// PostgreSQL: rows handed out whose `xid` is at or above `xmin`.
    ahead: BTreeSet<i64>,
}

impl JournalCursor {
    /// A cursor that answers the rows with id `from` or higher only, each
    /// once: for a reader that holds every row below `from` already (the
    /// event log's source, resuming at its watermark).
    pub(crate) fn from_id(from: i64) -> Self {
        JournalCursor { after_id: from.saturating_sub(1), min_id: from, ..JournalCursor::default() }
    }

    /// PostgreSQL: the `xmin` of the last read (every transaction below it
    /// had ended by then); 0 before the first read and on SQLite.
    pub(crate) fn xmin(&self) -> u64 {
        self.xmin
    }

    /// The rows of a PostgreSQL read (`(xid, row)`, every row with `xid`
    /// at or above the last `xmin`) under a snapshot whose `xmin` is
    /// `xmin`: answers those not handed out before, and remembers the ones
    /// the next reads will see again.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn admit(&mut self, rows: Vec<(u64, SettlementRecord)>, xmin: u64) -> Vec<SettlementRecord> {
        let mut ahead = BTreeSet::new();
        let mut fresh = Vec::with_capacity(rows.len());
        for (xid, row) in rows {
            if xid >= xmin {
                ahead.insert(row.id);
            }
            if !self.ahead.contains(&row.id) {
                fresh.push(row);
            }
        }
        self.ahead = ahead;
        self.xmin = self.xmin.max(xmin);
        fresh
    }
}

impl Store {
    /// The settlements committed since `cursor` (every one on a fresh
    /// cursor), by journal id within one answer; moves the cursor past
    /// them. Over successive calls each row is answered exactly once, also
    /// on PostgreSQL where a row may commit after rows with higher ids (see
    /// the module docs). A row purged before it was read is not answered.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the read fails (the cursor is left as
    /// it was), e.g. on a database that has not been migrated to the
    /// journal yet (no table `leasehold_settlements`); [`StoreError::CorruptRow`]
    /// for a row that is not one the store writes.
    pub async fn settlements(&self, cursor: &mut JournalCursor) -> StoreResult<Vec<SettlementRecord>> {
        self.backend().settlements(cursor).await
    }
}

impl Store {
    /// Where the journal's ids are final (the event log's source hands
    /// rows out in id order, so its watermark is one id). SQLite: `None`,
    /// ids commit in order. PostgreSQL: `(taken, next_xid)`, the highest
    /// id taken so far (committed or not; 0 for none) and, taken after it,
    /// a fresh transaction id. Every statement that appends to the journal
    /// modifies its job row first (the append selects from that update),
    /// so a transaction holds an id only once it has a transaction id, a
    /// lower one than `next_xid`; once a read's `xmin`
    /// ([`JournalCursor::xmin`]) reaches `next_xid`, every transaction that
    /// took an id up to `taken` has ended, and every row up to `taken` is
    /// visible or will never exist. When `taken` is below `from` (the
    /// reader holds every id below `from`), `next_xid` is 0 and no
    /// transaction id is taken, so an idle reader spends none.
    ///
    /// # Errors
    /// [`StoreError::Database`] when a read fails.
    pub(crate) async fn settlement_fence(&self, from: i64) -> StoreResult<Option<(i64, u64)>> {
        self.backend().settlement_fence(from).await
    }
}

/// One journal row as read.
pub(crate) fn record(row: &(impl DecodeRow + ?Sized)) -> StoreResult<SettlementRecord> {
    let outcome = row.text("outcome")?;
    let outcome = match outcome.as_str() {
        "done" => SettlementOutcome::Done,
        "retrying" => SettlementOutcome::Retrying {
            at: Millis(unsigned(TABLE, "retry_at", row.opt_int("retry_at")?.unwrap_or(0))?),
        },
        "dead" => SettlementOutcome::DeadLettered,
        "lost" => SettlementOutcome::Lost,
        "released" => SettlementOutcome::Released,
        "cancelled" => SettlementOutcome::Cancelled,
        other => {
            return Err(StoreError::CorruptRow { table: TABLE, detail: format!("unknown outcome {other:?}") });
        }
    };
    let owner = match row.opt_text("owner_host")? {
        Some(host_id) => Some(OwnerId {
            host_id,
            pid: u32::try_from(row.opt_int("owner_pid")?.unwrap_or(0)).unwrap_or(0),
            nonce: row.opt_text("owner_nonce")?.unwrap_or_default(),
            start_time: None,
            boot_id: None,
        }),
        None => None,
    };
    Ok(SettlementRecord {
        id: row.int("id")?,
        job: JobId(row.int("job_id")?),
        queue: row.text("queue")?,
        attempt: row.opt_int("attempt")?.map(|n| unsigned32(TABLE, "attempt", n)).transpose()?,
        token: unsigned(TABLE, "token", row.int("token")?)?,
        owner,
        outcome,
        error: row.opt_text("error")?,
        at: Millis(unsigned(TABLE, "at", row.int("at")?)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64) -> SettlementRecord {
        SettlementRecord {
            id,
            job: JobId(id),
            queue: "q".to_owned(),
            attempt: Some(1),
            token: 1,
            owner: None,
            outcome: SettlementOutcome::Done,
            error: None,
            at: Millis(0),
        }
    }

    fn ids(rows: &[SettlementRecord]) -> Vec<i64> {
        rows.iter().map(|r| r.id).collect()
    }

    #[test]
    fn a_row_that_commits_after_a_higher_id_is_still_handed_out_once() {
        let mut cursor = JournalCursor::default();
        // Transaction 10 took id 1 and is still open (xmin 10); 11 wrote
        // id 2 and committed: id 2 is handed out at once, and remembered.
        assert_eq!(ids(&cursor.admit(vec![(11, row(2))], 10)), [2]);
        // 10 commits: id 1 shows up below the new xmin, id 2 again.
        assert_eq!(ids(&cursor.admit(vec![(10, row(1)), (11, row(2))], 12)), [1]);
        // Both are final now: the next read (xid >= 12) sees neither.
        assert_eq!(ids(&cursor.admit(vec![(12, row(3))], 13)), [3]);
        assert!(cursor.ahead.is_empty());
    }

    #[test]
    fn rows_seen_again_while_the_watermark_is_held_back_are_not_repeated() {
        let mut cursor = JournalCursor::default();
        assert_eq!(ids(&cursor.admit(vec![(5, row(1)), (6, row(2))], 5)), [1, 2]);
        assert_eq!(ids(&cursor.admit(vec![(5, row(1)), (6, row(2)), (7, row(3))], 5)), [3]);
        assert_eq!(cursor.ahead, BTreeSet::from([1, 2, 3]));
        assert_eq!(ids(&cursor.admit(vec![(5, row(1)), (6, row(2)), (7, row(3))], 8)), Vec::<i64>::new());
        assert!(cursor.ahead.is_empty());
    }

    #[test]
    fn the_watermark_never_moves_back() {
        let mut cursor = JournalCursor::default();
        cursor.admit(Vec::new(), 20);
        cursor.admit(Vec::new(), 15);
        assert_eq!(cursor.xmin, 20);
    }
}
