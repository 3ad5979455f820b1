//! `leasehold ui`: a dashboard of the queue served by this tool — the
//! overview (counts by state, the last hour's throughput and latency, the
//! workers, lease health), the jobs with filters, one job with its attempts
//! and settlements, the schedules, live updates, and the steering actions
//! as buttons.
//!
//! One page (`assets/`, embedded in the binary; no build step, nothing
//! fetched from elsewhere) over a small JSON API (`api`), updated by
//! server-sent events (`live`). Who may use it is `auth`'s business:
//! loopback by default, a token everywhere else.

mod api;
mod assets;
mod auth;
mod live;

use crate::fail::CliError;
use crate::args::Global;
use axum::Router;
use axum::routing::{get, post};
use clap::Args;
use leasehold::store::Store;
use std::net::SocketAddr;
use std::sync::Arc;

/// `leasehold ui`.
#[derive(Debug, Args)]
pub struct UiArgs {
    /// Where to serve the dashboard: an IP address and port (localhost:PORT is 127.0.0.1). A
    /// loopback address (127.0.0.1, [::1]) by default; any other address needs --token.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = crate::args::parse_address)]
    pub listen: SocketAddr,
    /// Show the queue without the buttons that change it (cancel and retry a job, pause and
    /// resume a queue or a schedule); the server refuses those requests too, and a SQLite file
    /// is opened read-only.
    #[arg(long)]
    pub read_only: bool,
    /// A secret every request must carry (required off loopback): open
    /// http://ADDR/?token=TOKEN once in a browser (it keeps a cookie), or send
    /// `Authorization: Bearer TOKEN`.
    #[arg(long, env = "LEASEHOLD_UI_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// What every handler shares.
#[derive(Clone)]
pub struct Ui {
    pub store: Store,
    pub read_only: bool,
    pub access: Arc<auth::Access>,
    pub live: live::Live,
}

/// `leasehold ui`: checks the address and token before anything else, then
/// serves until Ctrl-C.
///
/// # Errors
/// A non-loopback address without a token, an empty token, an address that
/// cannot be listened on, or a database that cannot be opened: exit 2.
pub async fn run(global: &Global, args: &UiArgs) -> Result<u8, CliError> {
    let access = auth::Access::new(args.listen, args.token.clone())?;
    crate::refuse_in_memory(&global.database)?;
    crate::refuse_missing_sqlite_file(&global.database)?;
    let store = if args.read_only {
        crate::inspect::connect_read_only(&global.database).await?
    } else {
        crate::connect(global).await?
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| CliError::input(format!("--listen {}: cannot listen there: {e}", args.listen)))?;
    let bound = listener.local_addr().unwrap_or(args.listen);
    let live = live::Live::start(store.clone());
    let ui = Ui { store, read_only: args.read_only, access: Arc::new(access), live: live.clone() };
    let mode = if args.read_only { " (read-only)" } else { "" };
    errln!("leasehold ui: the dashboard{mode} is at http://{bound}/ (Ctrl-C stops it)");
    let shutdown = async move {
        let _ = tokio::signal::ctrl_c().await;
        // Ends the event streams, so the server's graceful stop does not
        // wait on them.
        live.stop();
    };
    axum::serve(listener, router(ui))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| CliError::input(format!("the dashboard's server stopped: {e}")))?;
    Ok(0)
}

/// Every route. `/metrics` is the store's Prometheus text
/// (`leasehold::metrics::render_store`), behind the same access rules.
pub fn router(ui: Ui) -> Router {
    let mut routes = Router::new()
        .route("/", get(assets::index))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/overview", get(api::overview))
        .route("/api/jobs", get(api::jobs))
        .route("/api/jobs/{id}", get(api::job))
        .route("/api/schedules", get(api::schedules))
        .route("/api/live", get(live::events))
        .route("/metrics", get(api::metrics));
    routes = if ui.read_only {
        routes.route("/api/{*action}", post(api::refuse_read_only))
    } else {
        routes
            .route("/api/jobs/{id}/cancel", post(api::cancel))
            .route("/api/jobs/{id}/retry", post(api::retry))
            .route("/api/queues/{queue}/pause", post(api::pause))
            .route("/api/queues/{queue}/resume", post(api::resume))
            .route("/api/schedules/{name}/pause", post(api::pause_schedule))
            .route("/api/schedules/{name}/resume", post(api::resume_schedule))
    };
    routes
        .method_not_allowed_fallback(api::method_not_allowed)
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn_with_state(ui.clone(), auth::check))
        .with_state(ui)
}
