//! `work --metrics ADDR`: this worker process's metrics over HTTP, at
//! `GET /metrics`, in the Prometheus text format (see
//! [`leasehold::metrics::WorkerMetrics`]).

use crate::fail::CliError;
use axum::http::header::CONTENT_TYPE;
use leasehold::metrics::WorkerMetrics;
use std::net::SocketAddr;
use tokio::task::JoinHandle;

/// Listens on `addr` (said on stderr, with the port given when it was 0)
/// and serves `metrics` from a task of its own until it is aborted.
///
/// # Errors
/// An address that cannot be listened on, named with `--metrics`.
pub async fn serve(addr: SocketAddr, metrics: WorkerMetrics) -> Result<JoinHandle<()>, CliError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::input(format!("--metrics {addr}: cannot listen there: {e}")))?;
    let bound = listener.local_addr().unwrap_or(addr);
    errln!("leasehold: metrics at http://{bound}/metrics");
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let text = metrics.render();
            async move { ([(CONTENT_TYPE, leasehold::metrics::CONTENT_TYPE)], text) }
        }),
    );
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            errln!("leasehold: the metrics endpoint stopped: {e}");
        }
    }))
}
