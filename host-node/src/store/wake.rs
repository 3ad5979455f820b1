//! Wake-ups: telling idle workers that a queue has new due work, so their
//! runner can `wake()` at once instead of waiting for its next poll (every wake arriving during a pass coalesces into one
//! follow-up pass). Polling stays the backstop: a missed wake-up costs at
//! most one poll interval.
//!
//! In one process, enqueue wakes the local subscribers of its queue directly.
//! On PostgreSQL, enqueue also sends `NOTIFY leasehold_jobs, '<schema>/<queue>'` in the
//! same statement (delivered at commit), and a store with subscribers keeps
//! one `LISTEN` connection that forwards each notification to its local
//! subscribers — that is how a worker on another machine hears about it.

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

/// The NOTIFY channel enqueues signal on; the payload is `<schema>/<queue>`.
pub const NOTIFY_CHANNEL: &str = "leasehold_jobs";

/// The local subscribers of one store, by queue.
#[derive(Debug, Default)]
pub(crate) struct LocalWakers {
    subscribers: Mutex<Vec<(Arc<str>, Weak<Notify>)>>,
}

impl LocalWakers {
    /// Registers a subscriber of `queue`.
    pub(crate) fn subscribe(&self, queue: &str) -> Arc<Notify> {
        let notify = Arc::new(Notify::new());
        let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.retain(|(_, w)| w.strong_count() > 0);
        subs.push((Arc::from(queue), Arc::downgrade(&notify)));
        notify
    }

    /// Wakes every live subscriber of `queue` (each keeps at most one
    /// pending wake, so a burst of enqueues coalesces).
    pub(crate) fn wake(&self, queue: &str) {
        let subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        for (q, w) in subs.iter() {
            if &**q == queue
                && let Some(n) = w.upgrade()
            {
                n.notify_one();
            }
        }
    }

    /// Wakes every subscriber: after a lost LISTEN connection, when
    /// notifications may have been missed.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn wake_all(&self) {
        let subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        for (_, w) in subs.iter() {
            if let Some(n) = w.upgrade() {
                n.notify_one();
            }
        }
    }

    /// Live subscriptions (dropped ones are forgotten at the next subscribe).
    #[cfg(test)]
    fn live(&self) -> usize {
        let subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.iter().filter(|(_, w)| w.strong_count() > 0).count()
    }
}

/// A subscription to one queue's wake-ups, from
/// [`Store::listen`](super::Store::listen).
///
/// Holds at most one pending wake: wake-ups that arrive while nobody awaits
/// coalesce into one, which is what a runner's `wake()` wants. Dropping it
/// unsubscribes.
#[derive(Debug)]
pub struct Wakeups {
    pub(crate) queue: String,
    pub(crate) notify: Arc<Notify>,
    // Keeps the store (and with it a PostgreSQL LISTEN task) alive while
    // anyone still waits on it.
    pub(crate) _store: Arc<dyn Send + Sync + std::fmt::Debug>,
}

impl Wakeups {
    /// Waits for the next wake-up of this queue (returns at once if one is
    /// pending).
    pub async fn notified(&self) {
        self.notify.notified().await;
    }

    /// The queue this subscription is about.
    pub fn queue(&self) -> &str {
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wake_reaches_only_the_queues_subscribers() {
        let wakers = LocalWakers::default();
        let a = wakers.subscribe("a");
        let b = wakers.subscribe("b");
        wakers.wake("a");
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), a.notified())
                .await
                .is_ok()
        );
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), b.notified())
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn wakes_while_nobody_waits_coalesce_into_one() {
        let wakers = LocalWakers::default();
        let a = wakers.subscribe("a");
        wakers.wake("a");
        wakers.wake("a");
        a.notified().await;
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), a.notified())
                .await
                .is_err()
        );
    }

    #[test]
    fn dropped_subscribers_are_forgotten() {
        let wakers = LocalWakers::default();
        let a = wakers.subscribe("a");
        assert_eq!(wakers.live(), 1);
        drop(a);
        assert_eq!(wakers.live(), 0);
        let _b = wakers.subscribe("b");
        assert_eq!(wakers.subscribers.lock().unwrap().len(), 1);
    }
}
