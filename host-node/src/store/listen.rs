//! Subscribing to a queue's wake-ups: local enqueues always, and on
//! PostgreSQL the store's one `LISTEN` connection, opened on the first
//! subscription and re-opened after a loss.

use std::sync::Arc;

use super::{Store, StoreResult, Wakeups, validate};

impl Store {
    /// Subscribes to wake-ups of `queue`: every enqueue of due work through
    /// this store, and on PostgreSQL every `NOTIFY` from any process (one
    /// `LISTEN` connection per store, opened on the first subscription and
    /// re-opened after a loss, when every subscriber is woken because
    /// notifications may have been missed). A worker awaits
    /// [`Wakeups::notified`] and calls its runner's `wake()`.
    pub async fn listen(&self, queue: &str) -> StoreResult<Wakeups> {
        validate::queue_name(queue)?;
        self.ensure_listener().await?;
        let notify = self.inner.wakers.subscribe(queue);
        Ok(Wakeups {
            queue: queue.to_owned(),
            notify,
            _store: self.inner.clone(),
        })
    }

    /// Makes sure the database's LISTEN connection is open (re-opening a
    /// lost one); answers whether the database has one.
    pub(super) async fn ensure_listener(&self) -> StoreResult<bool> {
        let mut slot = self
            .inner
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if slot.as_ref().is_some_and(|task| !task.is_finished()) {
            *self
                .inner
                .listener
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = slot;
            return Ok(true);
        }
        slot.take();
        let weak = Arc::downgrade(&self.inner);
        let task = self.backend().listen(Box::new(move |queue| {
            let Some(inner) = weak.upgrade() else {
                return false;
            };
            match queue {
                Some(q) => inner.wakers.wake(q),
                None => inner.wakers.wake_all(),
            }
            true
        }));
        let Some(task) = task.await? else { return Ok(false) };
        let mut guard = self
            .inner
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(old) = guard.replace(task) {
            old.abort();
        }
        Ok(true)
    }
}
