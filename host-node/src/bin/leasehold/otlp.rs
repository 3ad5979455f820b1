//! OTLP export of the library's OpenTelemetry spans (`--otlp-endpoint`, or
//! the standard `OTEL_EXPORTER_OTLP_ENDPOINT` / `_TRACES_ENDPOINT`): protobuf
//! over HTTP from the SDK's batch thread, flushed when the command ends.
//! Only the spans of target `leasehold::otel` go out (not the logs).

use crate::fail::CliError;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::time::Duration;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;

/// The environment variables that turn the export on without the flag.
const ENDPOINT_VARS: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];

/// The environment variables that set how long one export may take, in ms
/// (the first one set wins), as the OpenTelemetry specification names them.
const TIMEOUT_VARS: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"];

/// How long one export may take when no [`TIMEOUT_VARS`] is set (the
/// specification's default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the end of the command waits beyond the export's own timeout: the
/// hand-over to the batch thread and its reply.
const END_SLACK: Duration = Duration::from_secs(1);

/// The export, to finish when the command ends.
pub struct Exporting {
    provider: SdkTracerProvider,
    timeout: Duration,
}

impl Exporting {
    /// Sends the spans still in the batch and waits for the collector's
    /// answer: at most the export's timeout ([`TIMEOUT_VARS`], default 10 s)
    /// plus 1 s, so an export the exporter would still see through is never
    /// cut short by the process exiting. A failed or timed-out export is
    /// said in one line on stderr (those spans are lost); the command's exit
    /// code is unchanged.
    pub fn finish(self) {
        if let Err(e) = self.provider.shutdown_with_timeout(self.timeout + END_SLACK) {
            errln!("leasehold: exporting the last spans failed: {e}");
        }
    }
}

/// The tracing layer that exports, and the export to finish at the end,
/// when `flag` or one of the environment variables names a collector.
///
/// # Errors
/// A collector URL the exporter refuses, or a [`TIMEOUT_VARS`] value that
/// is not a whole number of milliseconds, named.
pub fn layer<S>(flag: Option<&str>) -> Result<Option<(impl Layer<S>, Exporting)>, CliError>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let from_env = ENDPOINT_VARS.iter().any(|var| std::env::var(var).is_ok_and(|v| !v.is_empty()));
    if flag.is_none() && !from_env {
        return Ok(None);
    }
    let timeout = export_timeout()?;
    // Set here rather than read by the exporter, so the end waits as long as an export may take.
    let mut builder = SpanExporter::builder().with_http().with_timeout(timeout);
    if let Some(base) = flag {
        // As OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL.
        builder = builder.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
    }
    let exporter = builder
        .build()
        .map_err(|e| CliError::input(format!("cannot export spans to {}: {e}", flag.unwrap_or("the OTLP endpoint"))))?;
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("leasehold"))
        .with_filter(Targets::new().with_target("leasehold::otel", tracing::Level::TRACE));
    Ok(Some((layer, Exporting { provider, timeout })))
}

/// How long one export may take: the first of [`TIMEOUT_VARS`] set (and
/// not empty), else [`DEFAULT_TIMEOUT`].
fn export_timeout() -> Result<Duration, CliError> {
    let Some((var, value)) = TIMEOUT_VARS
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()).map(|v| (var, v)))
    else {
        return Ok(DEFAULT_TIMEOUT);
    };
    value.trim().parse().map(Duration::from_millis).map_err(|_| {
        CliError::input(format!("{var} is {value:?}: give how long one span export may take, in whole milliseconds"))
    })
}
