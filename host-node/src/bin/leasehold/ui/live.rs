//! Live updates: one task polls the store's change marker
//! (`Store::change_marker`, a few index lookups) while a page listens, and
//! each page gets a server-sent event `change` when it moved; the page then
//! reads what it shows again. An action of this server checks at once.

use super::Ui;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use leasehold::store::Store;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// How often the marker is read while a page listens.
pub const POLL: Duration = Duration::from_millis(1000);

/// The change feed: a counter that moves with the marker.
#[derive(Clone)]
pub struct Live {
    changes: watch::Receiver<u64>,
    check_now: Arc<Notify>,
    task: Arc<tokio::task::AbortHandle>,
}

impl Live {
    /// Starts the polling task on `store`.
    pub fn start(store: Store) -> Live {
        let (tx, changes) = watch::channel(0u64);
        let check_now = Arc::new(Notify::new());
        let wake = check_now.clone();
        let task = tokio::spawn(async move {
            let mut last: Option<String> = None;
            loop {
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    () = wake.notified() => {}
                }
                // Nobody listening: nothing to read.
                if tx.receiver_count() <= 1 {
                    last = None;
                    continue;
                }
                let Ok(marker) = store.change_marker().await else { continue };
                // The first read after nobody listened has nothing to compare
                // with, and a page read its data before it connected: what
                // changed in between is announced too, so that page reads again.
                if last.as_ref().is_none_or(|l| *l != marker) {
                    tx.send_modify(|n| *n += 1);
                }
                last = Some(marker);
            }
        });
        Live { changes, check_now, task: Arc::new(task.abort_handle()) }
    }

    /// Reads the marker now (after an action of this server).
    pub fn check_now(&self) {
        self.check_now.notify_one();
    }

    /// Ends the polling task and with it every event stream.
    pub fn stop(&self) {
        self.task.abort();
    }
}

/// `GET /api/live`: `event: change` each time the queue changed, a
/// comment every 15 s to keep the connection open; first a `hello`.
pub async fn events(State(ui): State<Ui>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = ui.live.changes.clone();
    // Read the marker now rather than at the next poll: a change before that
    // read is announced as one (see the task), any later one moves it.
    ui.live.check_now();
    let hello = futures_util::stream::once(async { Ok(Event::default().event("hello").data("0")) });
    let changes = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.changed().await.ok()?;
        let n = *rx.borrow_and_update();
        Some((Ok(Event::default().event("change").data(n.to_string())), rx))
    });
    use futures_util::StreamExt;
    Sse::new(hello.chain(changes)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
