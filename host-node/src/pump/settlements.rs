//! The store's settlements journal as a pump source: the event log derives
//! one job event per settlement (`job-done`, `job-retrying`, …) from the
//! store's durable rows, after their commit, with the log's watermark, so a
//! settlement committed just before its worker was killed still reaches the
//! log, and a restart neither skips nor repeats one.
//!
//! # Positions
//!
//! A position is a journal id, and the source hands rows out in id order:
//! its committed length is the id below which every row is final (visible,
//! or never going to exist), so the log's watermark for this source is one
//! id. On SQLite ids commit in order, and every id below the highest read is
//! final. On PostgreSQL ids are taken as statements run and commit in any
//! order, so a row with a lower id may commit after a higher one: the
//! source reads the journal with a [`JournalCursor`] (each row once, none
//! skipped: see its docs) and moves its length only past ids it knows are
//! final, by a fence ([`Store::settlement_fence`]): the highest id taken so
//! far and, taken after it, a transaction id; once a read's `xmin`
//! reaches that transaction id, every transaction that held an id up to the
//! fence's has ended. A transaction left open holds the length back (its
//! row is never skipped) until it ends.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Map, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{EventDraft, EventSource, Kicker};
use crate::eventlog::EventRecord;
use crate::store::{JournalCursor, SettlementOutcome, SettlementRecord, Store, StoreResult};

/// The source name the settlements are logged under (the event's `source`).
pub const SETTLEMENTS_SOURCE: &str = "settlements";

/// A settlement as the event `leasehold events` and the event log show: type
/// `job-done`, `job-retrying`, `job-dead-lettered`, `job-lost`,
/// `job-released` or `job-cancelled`; `at` the settlement's time (ms since
/// the Unix epoch); identity the queue and the attempt's owner (`host`,
/// `pid`); body `{"job": id, "attempt": n, "token": t, "settlement": journal
/// id}` plus `error` (failures; for a lost lease, who took it over; for a
/// cancel, who and why) and `retryAt` (ms since the Unix epoch, retries).
/// `attempt` numbers the attempt as the job's attempt log does
/// ([`SettlementRecord::attempt`]); a settlement that ended no attempt (a
/// claim handed back unstarted, a cancel of a job that was not running) has
/// none.
pub fn settlement_event(row: &SettlementRecord) -> EventRecord {
    let mut identity = Map::new();
    identity.insert("queue".to_owned(), json!(row.queue));
    if let Some(owner) = &row.owner {
        identity.insert("host".to_owned(), json!(owner.host_id));
        identity.insert("pid".to_owned(), json!(owner.pid));
    }
    let mut body = json!({ "job": row.job.0, "token": row.token, "settlement": row.id });
    if let Some(attempt) = row.attempt {
        body["attempt"] = json!(attempt);
    }
    if let Some(error) = &row.error {
        body["error"] = json!(error);
    }
    if let SettlementOutcome::Retrying { at } = row.outcome {
        body["retryAt"] = json!(at.0);
    }
    EventRecord {
        source: SETTLEMENTS_SOURCE.to_owned(),
        at: row.at.0,
        kind: row.outcome.event_type().to_owned(),
        identity,
        body,
    }
}

struct State {
    /// Rows read and not yet logged, by id.
    rows: BTreeMap<i64, SettlementRecord>,
    /// Every row with a lower id is final and read: the committed length.
    limit: u64,
    /// PostgreSQL: fences read and not yet passed (`(taken, next_xid)`).
    fences: VecDeque<(i64, u64)>,
}

/// The settlements journal of a [`Store`] (of one queue, or all) as an
/// [`EventSource`]: register it with the pump under [`SETTLEMENTS_SOURCE`],
/// open the pump, then [`SettlementSource::follow`] the store from the
/// watermark the log holds for it.
///
/// A log replaced by a new epoch (a corrupt file set aside) gets the
/// settlements from where the source stands on; `leasehold events` reads
/// every one from the store itself.
pub struct SettlementSource {
    queue: Option<String>,
    state: Mutex<State>,
}

impl std::fmt::Debug for SettlementSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettlementSource").field("queue", &self.queue).finish_non_exhaustive()
    }
}

/// The task following the store for a [`SettlementSource`].
#[derive(Debug)]
pub struct Following {
    finish: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Following {
    /// Reads the journal once more (what was settled up to now reaches the
    /// source), then stops following. Flush or close the pump after it.
    pub async fn finish(self) {
        let _ = self.finish.send(true);
        let _ = self.task.await;
    }
}

impl SettlementSource {
    /// A source of `queue`'s settlements (`None`: every queue's).
    pub fn new(queue: Option<&str>) -> Self {
        SettlementSource {
            queue: queue.map(str::to_owned),
            state: Mutex::new(State { rows: BTreeMap::new(), limit: 0, fences: VecDeque::new() }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows `store`'s journal from journal id `from` (the pump's
    /// watermark for this source: [`super::PumpStatus::marks`]), reading it
    /// every `every` and kicking the pump through `kicker` when rows became
    /// final. A failed read is reported (a `tracing` warning, once per
    /// failure episode) and tried again at the next turn.
    pub fn follow(self: &Arc<Self>, store: Store, from: u64, kicker: Kicker, every: Duration) -> Following {
        let (finish, mut finishing) = watch::channel(false);
        let source = Arc::clone(self);
        let task = tokio::spawn(async move {
            source.lock().limit = from;
            let mut cursor = JournalCursor::from_id(i64::try_from(from).unwrap_or(i64::MAX).max(1));
            let mut failing = false;
            loop {
                let last = *finishing.borrow();
                match source.read(&store, &mut cursor).await {
                    Ok(moved) => {
                        failing = false;
                        if moved {
                            kicker.kick(SETTLEMENTS_SOURCE);
                        }
                    }
                    Err(e) => {
                        if !failing {
                            tracing::warn!("reading the settlements journal for the event log failed: {e}");
                        }
                        failing = true;
                    }
                }
                if last {
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    _ = finishing.changed() => {}
                }
            }
        });
        Following { finish, task }
    }

    /// One read of the journal: answers whether the committed length moved.
    async fn read(&self, store: &Store, cursor: &mut JournalCursor) -> StoreResult<bool> {
        // Before the rows: the rows' snapshot must come after the fence.
        let from = i64::try_from(self.lock().limit).unwrap_or(i64::MAX);
        let fence = store.settlement_fence(from).await?;
        let rows = store.settlements(cursor).await?;
        let mut state = self.lock();
        let before = state.limit;
        let highest = rows.iter().map(|row| row.id).max();
        for row in rows {
            if u64::try_from(row.id).is_ok_and(|id| id >= state.limit) {
                state.rows.insert(row.id, row);
            }
        }
        match fence {
            // SQLite: every id up to the highest read is final.
            None => {
                if let Some(id) = highest.and_then(|id| u64::try_from(id).ok()) {
                    state.limit = state.limit.max(id + 1);
                }
            }
            Some(fence) => {
                state.fences.push_back(fence);
                while let Some(&(taken, next_xid)) = state.fences.front() {
                    if cursor.xmin() < next_xid {
                        break;
                    }
                    state.limit = state.limit.max(u64::try_from(taken).unwrap_or(0) + 1);
                    state.fences.pop_front();
                }
            }
        }
        Ok(state.limit > before)
    }
}

impl EventSource for SettlementSource {
    fn committed_len(&self) -> u64 {
        self.lock().limit
    }

    fn derive(&self, index: u64, out: &mut Vec<EventDraft>) {
        let state = self.lock();
        let Some(row) = i64::try_from(index).ok().and_then(|id| state.rows.get(&id)) else { return };
        if self.queue.as_deref().is_some_and(|queue| queue != row.queue) {
            return;
        }
        let event = settlement_event(row);
        out.push(EventDraft { kind: event.kind, at: Some(event.at), identity: event.identity, body: event.body });
    }

    /// A settlement is final: old ones may go by retention.
    fn quiet(&self) -> bool {
        true
    }

    /// Also at open, with the log's watermark, before [`SettlementSource::follow`]
    /// starts there: the rows below it are logged, so the committed length is
    /// at least that (a length below it would read as a journal cut back).
    fn logged(&self, position: u64) {
        let mut state = self.lock();
        state.limit = state.limit.max(position);
        let keep = state.rows.split_off(&i64::try_from(position).unwrap_or(i64::MAX));
        state.rows = keep;
    }
}
