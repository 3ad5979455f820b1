//! Coalesced fenced writes: many workers' completions and renewals, each
//! awaited on its own, sent to the database as one statement per kind.
//!
//! Natural batching, no timer: one task takes the first waiting write, then
//! every other write already queued (up to a bound), sends them, answers
//! each, and repeats. Writes arriving while a statement is in flight wait for
//! the next one, so under load batches grow by themselves and an idle store
//! adds no latency. Every write stays fenced on its own (job id + token):
//! coalescing changes how many statements run, never which writes land.

use std::sync::Arc;

use leasehold_core::Millis;
use leasehold_core::lease::FenceOutcome;
use tokio::sync::{mpsc, oneshot};

use super::{Fence, Store, StoreError, StoreResult};

/// Most writes of one kind per statement.
pub(crate) const DEFAULT_MAX_BATCH: usize = 500;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Complete,
    Heartbeat,
}

struct Request {
    kind: Kind,
    fence: Fence,
    /// A completion's result, if any.
    result: Option<serde_json::Value>,
    now: Millis,
    reply: oneshot::Sender<StoreResult<FenceOutcome>>,
}

/// Coalesces [`Store::complete`] and [`Store::heartbeat`] calls from many
/// tasks into [`Store::complete_many`] / [`Store::heartbeat_many`]
/// statements. From [`Store::coalescer`]; clone freely. The background task
/// ends when the last clone is dropped.
///
/// A batch's statement is stamped with the latest `now` among its writes
/// (SQLite; PostgreSQL stamps with its own clock). If the statement fails,
/// every write in it gets [`StoreError::Coalesced`] with the shared cause,
/// and none of them landed.
#[derive(Clone, Debug)]
pub struct Coalescer {
    tx: mpsc::UnboundedSender<Request>,
}

impl Coalescer {
    pub(crate) fn spawn(store: Store, max_batch: usize) -> Coalescer {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(store, rx, max_batch.max(1)));
        Coalescer { tx }
    }

    /// Completes the job of `fence`, writing `result` with it if given (as
    /// [`Store::complete`]), coalesced with concurrent writes.
    pub async fn complete(
        &self,
        fence: Fence,
        result: Option<serde_json::Value>,
        now: Millis,
    ) -> StoreResult<FenceOutcome> {
        self.submit(Kind::Complete, fence, result, now).await
    }

    /// Renews the lease of `fence`, coalesced with concurrent writes.
    pub async fn heartbeat(&self, fence: Fence, now: Millis) -> StoreResult<FenceOutcome> {
        self.submit(Kind::Heartbeat, fence, None, now).await
    }

    async fn submit(
        &self,
        kind: Kind,
        fence: Fence,
        result: Option<serde_json::Value>,
        now: Millis,
    ) -> StoreResult<FenceOutcome> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Request {
                kind,
                fence,
                result,
                now,
                reply,
            })
            .map_err(|_| StoreError::CoalescerStopped)?;
        answer.await.map_err(|_| StoreError::CoalescerStopped)?
    }
}

async fn run(store: Store, mut rx: mpsc::UnboundedReceiver<Request>, max_batch: usize) {
    let mut batch: Vec<Request> = Vec::new();
    while let Some(first) = rx.recv().await {
        batch.push(first);
        while batch.len() < max_batch * 2 {
            match rx.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        let (completes, heartbeats): (Vec<Request>, Vec<Request>) =
            batch.drain(..).partition(|r| r.kind == Kind::Complete);
        // Both kinds go out together; neither waits behind the other.
        tokio::join!(
            flush(&store, completes, max_batch, Kind::Complete),
            flush(&store, heartbeats, max_batch, Kind::Heartbeat)
        );
    }
}

async fn flush(store: &Store, mut requests: Vec<Request>, max_batch: usize, kind: Kind) {
    while !requests.is_empty() {
        let rest = requests.split_off(requests.len().min(max_batch));
        let chunk = std::mem::replace(&mut requests, rest);
        let now = chunk.iter().map(|r| r.now).max().unwrap_or_default();
        let answer = match kind {
            Kind::Complete => {
                let completions: Vec<_> = chunk.iter().map(|r| (r.fence, r.result.as_ref())).collect();
                store.complete_many(&completions, now).await
            }
            Kind::Heartbeat => {
                let fences: Vec<Fence> = chunk.iter().map(|r| r.fence).collect();
                store.heartbeat_many(&fences, now).await
            }
        };
        match answer {
            Ok(outcomes) => {
                for (request, outcome) in chunk.into_iter().zip(outcomes) {
                    // A caller that stopped waiting has nothing to be told.
                    let _ = request.reply.send(Ok(outcome));
                }
            }
            Err(error) => {
                let shared = Arc::new(error);
                for request in chunk {
                    let _ = request
                        .reply
                        .send(Err(StoreError::Coalesced(shared.clone())));
                }
            }
        }
    }
}
