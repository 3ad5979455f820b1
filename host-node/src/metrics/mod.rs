//! Prometheus metrics (feature `metrics`), in the Prometheus text format
//! (version 0.0.4, [`CONTENT_TYPE`]) through the `prometheus-client` crate.
//!
//! Two sources, two endpoints:
//!
//! - **The queue, from the store** ([`render_store`]): what any process that
//!   can read the database can tell — jobs by queue and state, settlements
//!   by outcome from the settlements journal, and the lease health the
//!   workers record in the workers table. The dashboard (`leasehold ui`)
//!   serves it at `/metrics`.
//! - **One worker process** ([`WorkerMetrics`]): how long its claims,
//!   performs and renewals take (histograms) and what it counted, which
//!   only that process knows. `leasehold work --metrics 127.0.0.1:PORT`
//!   serves it; a Rust service hands the same [`WorkerMetrics`] to its
//!   workers ([`crate::worker::Worker::metrics`]) and serves
//!   [`WorkerMetrics::render`], or registers it into its own
//!   `prometheus_client` registry ([`WorkerMetrics::register`]).
//!
//! Every metric is named `leasehold_…` and labelled with its `queue`.

mod store;
mod worker;

pub use store::render_store;
pub use worker::WorkerMetrics;
pub(crate) use worker::QueueMetrics;

/// The `Content-Type` of what [`render_store`] and [`WorkerMetrics::render`]
/// answer: the Prometheus text format, version 0.0.4.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// A registry's metrics as Prometheus text.
fn encode(registry: &prometheus_client::registry::Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, registry)
        .expect("writing to a String cannot fail");
    text
}
