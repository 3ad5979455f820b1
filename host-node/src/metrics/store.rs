//! The queue's metrics, read from the store at each scrape.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use leasehold_core::Millis;

use crate::store::{Store, StoreResult, WorkerCounters};

/// A lease counter's metric name, its help text, and how to read it off a worker's counters.
type LeaseCounter = (&'static str, &'static str, fn(&WorkerCounters) -> u64);

type Labels = Vec<(&'static str, String)>;

/// The queue's metrics as Prometheus text (serve it with [`super::CONTENT_TYPE`]),
/// as they stand at `now` (the caller's clock, ms since the Unix epoch: it
/// tells a job not due yet from a due one):
///
/// - `leasehold_jobs{queue,state}` (gauge): jobs by state, the states the
///   dashboard and `leasehold status` show — `queued` (due, never tried),
///   `scheduled` (not due yet), `retrying` (failed, to be tried again),
///   `running`, `succeeded`, `dead`, `cancelled`. On a large jobs table
///   `succeeded` is estimated from a sample of job ids, as on the dashboard
///   ([`crate::store::dashboard::Overview::succeeded_estimated`]); every
///   other state is counted exactly;
/// - `leasehold_queue_paused{queue}` (gauge): 1 for each paused queue;
/// - `leasehold_settled_total{queue,outcome}` (counter): settled attempts in
///   the settlements journal by outcome — `done`, `retrying`, `dead`,
///   `lost`, `released`, `cancelled` (`leasehold purge` removes old rows, so
///   a purge shows as a counter reset);
/// - `leasehold_lease_renewals_total`, `leasehold_lease_lapses_total`,
///   `leasehold_lease_losses_total`, `leasehold_lease_steals_total`
///   `{queue}` (counters): the sums over the workers table (each worker
///   records its counters every few seconds; see
///   [`crate::store::WorkerCounters`] for what each counts).
///
/// Three reads: the dashboard's overview (one snapshot), the journal's
/// grouped counts (a scan of that table, so it grows with the rows `purge`
/// keeps) and the workers table.
///
/// # Errors
/// The store's, when a read fails ([`crate::store::StoreError::Database`]).
pub async fn render_store(store: &Store, now: Millis) -> StoreResult<String> {
    let overview = store.overview(now).await?;
    let settled = store.settlement_totals().await?;
    let workers = store.workers().await?;

    let mut registry = Registry::default();
    let jobs = Family::<Labels, Gauge>::default();
    registry.register("leasehold_jobs", "Jobs by queue and state", jobs.clone());
    let paused_gauge = Family::<Labels, Gauge>::default();
    registry.register("leasehold_queue_paused", "1 for a paused queue (claims skip it)", paused_gauge.clone());
    for q in &overview.queues {
        let c = &q.counts;
        let states = [
            ("queued", c.queued),
            ("scheduled", c.scheduled),
            ("retrying", c.retrying),
            ("running", c.running),
            ("succeeded", c.succeeded),
            ("dead", c.dead),
            ("cancelled", c.cancelled),
        ];
        for (state, n) in states {
            let labels = vec![("queue", q.queue.clone()), ("state", state.to_owned())];
            jobs.get_or_create(&labels).set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        if q.paused_at_ms.is_some() {
            paused_gauge.get_or_create(&vec![("queue", q.queue.clone())]).set(1);
        }
    }
    let settled_total = Family::<Labels, Counter>::default();
    registry.register(
        "leasehold_settled",
        "Settled attempts in the settlements journal, by queue and outcome",
        settled_total.clone(),
    );
    for t in &settled {
        let labels = vec![("queue", t.queue.clone()), ("outcome", t.outcome.clone())];
        settled_total.get_or_create(&labels).inc_by(t.count);
    }
    let mut per_queue: Vec<(String, WorkerCounters)> = Vec::new();
    for w in &workers {
        if per_queue.last().is_none_or(|(q, _)| *q != w.queue) {
            per_queue.push((w.queue.clone(), WorkerCounters::default()));
        }
        let sum = &mut per_queue.last_mut().expect("pushed above").1;
        sum.renewals += w.counters.renewals;
        sum.lapses += w.counters.lapses;
        sum.losses += w.counters.losses;
        sum.steals += w.counters.steals;
    }
    let lease: [LeaseCounter; 4] = [
        ("leasehold_lease_renewals", "Lease renewals that landed, summed over the workers recorded", |c| c.renewals),
        ("leasehold_lease_lapses", "Claims lapsed because renewals stopped confirming, summed over the workers recorded", |c| c.lapses),
        ("leasehold_lease_losses", "Claims found lost to another worker or a cancel, summed over the workers recorded", |c| c.losses),
        ("leasehold_lease_steals", "Jobs taken over from a stale owner, summed over the workers recorded", |c| c.steals),
    ];
    for (name, help, get) in lease {
        let family = Family::<Labels, Counter>::default();
        registry.register(name, help, family.clone());
        for (queue, sum) in &per_queue {
            family.get_or_create(&vec![("queue", queue.clone())]).inc_by(get(sum));
        }
    }
    Ok(super::encode(&registry))
}
