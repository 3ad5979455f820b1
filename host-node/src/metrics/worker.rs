//! A worker process's own metrics: durations and counts only it knows.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::worker::{Count, Took};

type Labels = [(&'static str, String); 1];
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;
type Counters = Family<Labels, Counter>;

/// Buckets of a database round trip (claim, renewal): 0.5 ms doubling to
/// about 16 s.
fn round_trip() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// Buckets of a perform: 1 ms, ×4 each, to about 70 min.
fn perform() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 4.0, 12))
}

/// The counters, by name suffix and help, in [`Count`] order.
const COUNTERS: [(&str, &str); 8] = [
    ("claimed", "Jobs claimed"),
    ("succeeded", "Attempts completed"),
    ("failed", "Attempts failed with attempts left (queued again)"),
    ("dead_lettered", "Attempts failed on their job's last attempt (dead-lettered)"),
    ("renewals", "Lease renewals that landed"),
    ("lapses", "Claims lapsed because renewals stopped confirming"),
    ("losses", "Claims found lost to another worker or a cancel"),
    ("steals", "Jobs taken over from a stale owner"),
];

/// The metrics of the workers of one process, labelled by queue:
///
/// - `leasehold_claim_duration_seconds{queue}` (histogram): each claim
///   statement, whether or not it found work;
/// - `leasehold_perform_duration_seconds{queue}` (histogram): each handler
///   run that answered (a perform dropped after a lapse is not observed);
/// - `leasehold_renewal_duration_seconds{queue}` (histogram): each renewal,
///   landed or refused;
/// - `leasehold_worker_claimed_total`, `…_succeeded_total`,
///   `…_failed_total`, `…_dead_lettered_total`, `…_renewals_total`,
///   `…_lapses_total`, `…_losses_total`, `…_steals_total` `{queue}`
///   (counters): as [`crate::store::WorkerCounters`] counts them.
///
/// Hand it to each [`crate::worker::Worker`] of the process
/// ([`crate::worker::Worker::metrics`]); cheap to clone (clones share the
/// metrics). Recording is an atomic add or two per claim, renewal and
/// perform, on handles looked up once per worker.
#[derive(Clone, Debug)]
pub struct WorkerMetrics {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    claim: Histograms,
    perform: Histograms,
    renewal: Histograms,
    counters: [Counters; 8],
    registry: Registry,
}

impl Default for WorkerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl WorkerMetrics {
    /// No worker recorded yet.
    pub fn new() -> Self {
        let claim: Histograms = Family::new_with_constructor(round_trip);
        let perform: Histograms = Family::new_with_constructor(perform);
        let renewal: Histograms = Family::new_with_constructor(round_trip);
        let counters: [Counters; 8] = Default::default();
        let mut metrics = Inner { claim, perform, renewal, counters, registry: Registry::default() };
        let mut registry = Registry::default();
        metrics.register_into(&mut registry);
        metrics.registry = registry;
        WorkerMetrics { inner: Arc::new(metrics) }
    }

    /// Registers these metrics into `registry` (a `prometheus_client`
    /// registry of your service), sharing them: what the workers record
    /// shows there.
    pub fn register(&self, registry: &mut Registry) {
        self.inner.register_into(registry);
    }

    /// The metrics as Prometheus text (serve it with [`super::CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        super::encode(&self.inner.registry)
    }

    /// The handles of `queue`'s series, for a worker to record into.
    pub(crate) fn for_queue(&self, queue: &str) -> QueueMetrics {
        let labels: Labels = [("queue", queue.to_owned())];
        let m = &self.inner;
        QueueMetrics {
            claim: m.claim.get_or_create_owned(&labels),
            perform: m.perform.get_or_create_owned(&labels),
            renewal: m.renewal.get_or_create_owned(&labels),
            counters: std::array::from_fn(|i| m.counters[i].get_or_create_owned(&labels)),
        }
    }
}

impl Inner {
    fn register_into(&self, registry: &mut Registry) {
        registry.register(
            "leasehold_claim_duration_seconds",
            "How long each claim statement took",
            self.claim.clone(),
        );
        registry.register(
            "leasehold_perform_duration_seconds",
            "How long each handler run that answered took",
            self.perform.clone(),
        );
        registry.register(
            "leasehold_renewal_duration_seconds",
            "How long each lease renewal took",
            self.renewal.clone(),
        );
        for ((name, help), family) in COUNTERS.iter().zip(&self.counters) {
            registry.register(format!("leasehold_worker_{name}"), *help, family.clone());
        }
    }
}

/// One queue's series: handles that share the registry's values.
#[derive(Clone, Debug)]
pub(crate) struct QueueMetrics {
    claim: Histogram,
    perform: Histogram,
    renewal: Histogram,
    /// In [`Count`] order.
    counters: [Counter; 8],
}

impl QueueMetrics {
    pub(crate) fn add(&self, count: Count, n: u64) {
        self.counters[count as usize].inc_by(n);
    }

    pub(crate) fn observe(&self, took: Took, span: Duration) {
        let histogram = match took {
            Took::Claim => &self.claim,
            Took::Perform => &self.perform,
            Took::Renewal => &self.renewal,
        };
        histogram.observe(span.as_secs_f64());
    }
}
