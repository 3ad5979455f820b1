//! OpenTelemetry spans (feature `otel`), made with `tracing` and read by
//! `tracing-opentelemetry`: install its layer with your tracer
//! (`tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer))`)
//! and the store and workers report, following the messaging semantic
//! conventions:
//!
//! - `send {queue}` (kind PRODUCER, `messaging.operation.type = send`) for
//!   each enqueue ([`crate::store::Store::enqueue`] and its batch forms, with
//!   `messaging.batch.message_count`, or `messaging.message.id` for one job).
//!   Its trace context is stored with each job (`trace_context`, a W3C
//!   `traceparent`) when a tracer is recording;
//! - `receive {queue}` (kind CLIENT, `messaging.operation.type = receive`,
//!   `messaging.batch.message_count` = jobs claimed) for each claim statement
//!   of a [`crate::worker::Worker`];
//! - `process {queue}` (kind CONSUMER, `messaging.operation.type = process`,
//!   `messaging.message.id` = the job id) for each handler run, linked to its
//!   job's enqueue span; a lease lost or lapsed meanwhile is a span event
//!   `lease_lost` with `error.type = lease_lost` (and `leasehold.lapsed`);
//! - `settle {queue}` (kind CLIENT, `messaging.operation.type = settle`) for
//!   each fenced write of an outcome.
//!
//! Every span has `messaging.system = leasehold` and
//! `messaging.destination.name` = the queue. Without a subscriber that
//! records them the spans cost a check each, and no trace context is written.
//!
//! The `send`, `receive` and `settle` spans have ended when the call that
//! made them returns, so a provider flushed or shut down right after it
//! exports them. They are open, but not entered, while their statements
//! run: SQLite's driver takes the entered span to its connection thread
//! with each statement and lets go of it only after answering, which would
//! end the span a moment after the call returned (and a short-lived program
//! that shut its provider down meanwhile would never export it). So the
//! driver's own log events are not children of these spans. The `process`
//! span is entered (the handler's spans are its children): a handler that
//! runs SQLite statements itself may end it a moment late;
//! [`crate::store::Store::close`] waits for the driver's threads.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// A span of `operation` on `queue`, of kind `kind`, with the attributes
/// every messaging span has, and the `extra` fields.
macro_rules! messaging_span {
    ($operation:literal, $kind:literal, $queue:expr $(, $($extra:tt)+)?) => {
        tracing::info_span!(
            target: "leasehold::otel",
            $operation,
            otel.name = format!(concat!($operation, " {}"), $queue),
            otel.kind = $kind,
            messaging.system = "leasehold",
            "messaging.operation.type" = $operation,
            messaging.operation.name = $operation,
            messaging.destination.name = $queue,
            $($($extra)+)?
        )
    };
}

/// `send {queue}` for an enqueue of `n` jobs.
pub(crate) fn send(queue: &str, n: usize) -> Span {
    messaging_span!(
        "send",
        "producer",
        queue,
        messaging.batch.message_count = (n > 1).then(|| i64::try_from(n).unwrap_or(i64::MAX)),
        messaging.message.id = tracing::field::Empty,
    )
}

/// `receive {queue}` for one claim statement; its batch size is recorded
/// once known ([`received`]).
pub(crate) fn receive(queue: &str) -> Span {
    messaging_span!("receive", "client", queue, messaging.batch.message_count = tracing::field::Empty)
}

/// Records how many jobs a claim took.
pub(crate) fn received(span: &Span, n: usize) {
    span.record("messaging.batch.message_count", i64::try_from(n).unwrap_or(i64::MAX));
}

/// `process {queue}` for one handler run of job `id`, linked to the trace
/// context its enqueue stored (if any).
pub(crate) fn process(queue: &str, id: i64, enqueued: Option<&str>) -> Span {
    let span = messaging_span!("process", "consumer", queue, messaging.message.id = id.to_string());
    if let Some(context) = enqueued.and_then(parse_traceparent) {
        span.add_link(context);
    }
    span
}

/// `settle {queue}` for the fenced write of job `id`'s outcome.
pub(crate) fn settle(queue: &str, id: i64) -> Span {
    messaging_span!("settle", "client", queue, messaging.message.id = id.to_string())
}

/// The span event of a lost (`lapsed` false) or lapsed claim.
pub(crate) fn lease_lost(span: &Span, lapsed: bool) {
    span.in_scope(|| {
        tracing::event!(
            target: "leasehold::otel",
            tracing::Level::WARN,
            { error.r#type = "lease_lost", leasehold.lapsed = lapsed },
            "lease_lost"
        );
    });
}

/// The W3C `traceparent` of `span` (`00-{trace id}-{span id}-{flags}`), or
/// `None` when no tracer records it (its context is invalid then).
pub(crate) fn traceparent(span: &Span) -> Option<String> {
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        )
    })
}

/// Reads a `traceparent` written by [`traceparent`]; `None` for anything
/// else (a stored value is never trusted to be well formed).
fn parse_traceparent(text: &str) -> Option<SpanContext> {
    let mut parts = text.split('-');
    let (version, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version != "00" || parts.next().is_some() || trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(span).ok()?;
    let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()?);
    let context = SpanContext::new(trace_id, span_id, flags, true, TraceState::default());
    context.is_valid().then_some(context)
}

#[cfg(test)]
mod tests {
    use super::parse_traceparent;

    #[test]
    fn a_traceparent_is_read_back_and_anything_else_is_refused() {
        let context = parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").expect("valid");
        assert_eq!(context.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(context.span_id().to_string(), "b7ad6b7169203331");
        assert!(context.is_sampled() && context.is_remote());
        for bad in [
            "",
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
            "00-zzf7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad:?}");
        }
    }
}
