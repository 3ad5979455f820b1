//! OTLP export of the library's OpenTelemetry spans (`--otlp-endpoint`, or
//! the standard `OTEL_EXPORTER_OTLP_ENDPOINT` / `_TRACES_ENDPOINT`): protobuf
//! over HTTP from the SDK's batch thread, flushed when the command ends.
//! Only the spans of target `leasehold::otel` go out (not the logs).

use crate::fail::CliError;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;

/// The environment variables that turn the export on without the flag.
const ENDPOINT_VARS: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];

/// The tracing layer that exports, and its provider (to flush at the end),
/// when `flag` or one of the environment variables names a collector.
///
/// # Errors
/// A collector URL the exporter refuses, named.
pub fn layer<S>(flag: Option<&str>) -> Result<Option<(impl Layer<S>, SdkTracerProvider)>, CliError>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let from_env = ENDPOINT_VARS.iter().any(|var| std::env::var(var).is_ok_and(|v| !v.is_empty()));
    if flag.is_none() && !from_env {
        return Ok(None);
    }
    let mut builder = SpanExporter::builder().with_http();
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
    Ok(Some((layer, provider)))
}
