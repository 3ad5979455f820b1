//! A scriptable in-memory job for the tokio runner tests (virtual time).
#![allow(dead_code)]

use leasehold::core::Millis;
use leasehold::runner::{AbortSignal, BoxError, Job, JobEvent};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How perform behaves for an item.
#[derive(Clone, Copy, Debug)]
pub enum Work {
    /// Sleeps, then succeeds.
    Sleep(u64),
    /// Sleeps, then raises.
    Fail(u64),
    /// Runs until the signal fires, then raises with its reason.
    UntilAborted,
    /// Never finishes and ignores the signal.
    Forever,
    /// Panics.
    Panic,
}

#[derive(Default)]
pub struct Counters {
    pub claims: AtomicUsize,
    pub in_claim: AtomicUsize,
    pub max_in_claim: AtomicUsize,
    pub performing: AtomicUsize,
    pub max_performing: AtomicUsize,
    pub dropped: AtomicUsize,
    pub renewals: AtomicUsize,
    pub reasons: Mutex<Vec<(u64, bool)>>,
}

pub struct TestJob {
    pub items: Mutex<std::collections::VecDeque<u64>>,
    pub claim_delay_ms: u64,
    pub fail_claim_at: Option<usize>,
    pub work: fn(u64) -> Work,
    pub counters: Arc<Counters>,
}

impl TestJob {
    pub fn new(n: u64, work: fn(u64) -> Work) -> (TestJob, Arc<Counters>) {
        let counters = Arc::new(Counters::default());
        (
            TestJob { items: Mutex::new((0..n).collect()), claim_delay_ms: 0, fail_claim_at: None, work, counters: counters.clone() },
            counters,
        )
    }
}

struct DropFlag(Arc<Counters>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.performing.fetch_sub(1, Ordering::SeqCst);
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

impl Job for TestJob {
    type Item = u64;

    async fn claim(&self, _at: Millis) -> Result<Option<u64>, BoxError> {
        let c = &self.counters;
        let n = c.claims.fetch_add(1, Ordering::SeqCst) + 1;
        let inside = c.in_claim.fetch_add(1, Ordering::SeqCst) + 1;
        c.max_in_claim.fetch_max(inside, Ordering::SeqCst);
        if self.claim_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.claim_delay_ms)).await;
        }
        c.in_claim.fetch_sub(1, Ordering::SeqCst);
        if self.fail_claim_at == Some(n) {
            return Err("db down".into());
        }
        Ok(self.items.lock().unwrap().pop_front())
    }

    async fn perform(&self, item: u64, signal: AbortSignal) -> Result<(), BoxError> {
        let c = &self.counters;
        let now = c.performing.fetch_add(1, Ordering::SeqCst) + 1;
        c.max_performing.fetch_max(now, Ordering::SeqCst);
        // Counts a perform that is dropped before it finishes.
        let guard = DropFlag(c.clone());
        let result: Result<(), BoxError> = match (self.work)(item) {
            Work::Sleep(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(())
            }
            Work::Fail(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Err(format!("item {item} failed").into())
            }
            Work::UntilAborted => {
                let reason = signal.aborted().await;
                c.reasons.lock().unwrap().push((item, reason.lapsed));
                Err(reason.into())
            }
            Work::Forever => std::future::pending().await,
            Work::Panic => panic!("item {item} exploded"),
        };
        std::mem::forget(guard);
        c.performing.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

/// A job whose renewals answer as `renew` says (after `renew_ms`).
pub struct RenewingJob {
    pub inner: TestJob,
    pub renew: fn(usize) -> Option<Result<bool, ()>>,
    pub renew_ms: u64,
}

impl Job for RenewingJob {
    type Item = u64;
    const HEARTBEAT: bool = true;

    async fn claim(&self, at: Millis) -> Result<Option<u64>, BoxError> {
        self.inner.claim(at).await
    }

    async fn perform(&self, item: u64, signal: AbortSignal) -> Result<(), BoxError> {
        self.inner.perform(item, signal).await
    }

    async fn heartbeat(&self, _item: u64, _at: Millis) -> Result<bool, BoxError> {
        let n = self.inner.counters.renewals.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::time::sleep(Duration::from_millis(self.renew_ms)).await;
        match (self.renew)(n) {
            Some(Ok(answer)) => Ok(answer),
            Some(Err(())) => Err("store unreachable".into()),
            None => std::future::pending().await,
        }
    }
}

/// Collects events.
pub fn recorder() -> (Arc<Mutex<Vec<JobEvent>>>, impl Fn(&JobEvent) + Send + Sync + 'static) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: &JobEvent| events.lock().unwrap().push(e.clone())
    };
    (events, sink)
}

pub fn types(events: &Mutex<Vec<JobEvent>>) -> Vec<&'static str> {
    events.lock().unwrap().iter().map(|e| e.event.type_name()).collect()
}

pub fn load(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}
