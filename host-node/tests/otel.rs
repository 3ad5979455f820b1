//! OpenTelemetry spans (feature `otel`) as the SDK's in-memory exporter gets
//! them through `tracing-opentelemetry`: names, kinds, the messaging
//! attributes, the link from each perform to its job's enqueue, and a lost
//! lease as a span event.
#![cfg(all(feature = "sqlite", feature = "otel"))]

mod store_support;

use std::sync::Arc;
use std::time::Duration;

use leasehold::core::Millis;
use leasehold::runner::{AbortSignal, BoxError, JobRunner};
use leasehold::store::{ClaimedJob, EnqueueOptions, Store};
use leasehold::worker::{Handler, Worker};
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tokio::sync::Notify;
use tracing_subscriber::layer::SubscriberExt;

fn now() -> Millis {
    Millis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64,
    )
}

/// Spans of everything run under the returned guard, on this thread.
fn record() -> (
    InMemorySpanExporter,
    SdkTracerProvider,
    tracing::subscriber::DefaultGuard,
) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("leasehold-test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (exporter, provider, guard)
}

fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> String {
    attr(&span.attributes, key)
        .map(|v| v.as_str().into_owned())
        .unwrap_or_default()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

async fn enqueue_one(store: &Store) -> leasehold::store::JobId {
    store.enqueue("mail", &serde_json::json!({}), &EnqueueOptions::default(), now()).await.unwrap()
}

struct Quick;

impl Handler for Quick {
    async fn handle(
        &self,
        _job: &ClaimedJob,
        _signal: AbortSignal,
    ) -> Result<Option<serde_json::Value>, BoxError> {
        Ok(None)
    }
}

#[tokio::test]
async fn an_enqueue_a_claim_a_perform_and_a_settle_are_messaging_spans_and_the_perform_links_to_the_enqueue()
 {
    for db in store_support::backends("otel_spans").await {
        let (exporter, provider, _guard) = record();
        let store = db.store.clone();
        let id = enqueue_one(&store).await;
        let runner = JobRunner::builder("test.otel")
            .spawn(Worker::new(store.clone(), "mail", Quick).record_every(None))
            .unwrap();
        assert_eq!(runner.tick().await.performed, 1);
        runner.dispose().await;
        provider.force_flush().unwrap();
        let spans = exporter.get_finished_spans().unwrap();

        let [send] = named(&spans, "send mail")[..] else {
            panic!("one send span: {spans:#?}")
        };
        let [process] = named(&spans, "process mail")[..] else {
            panic!("one process span: {spans:#?}")
        };
        let [settle] = named(&spans, "settle mail")[..] else {
            panic!("one settle span: {spans:#?}")
        };
        let receives = named(&spans, "receive mail");
        assert_eq!(
            (
                send.span_kind.clone(),
                process.span_kind.clone(),
                settle.span_kind.clone()
            ),
            (SpanKind::Producer, SpanKind::Consumer, SpanKind::Client)
        );
        for (span, operation) in [(send, "send"), (process, "process"), (settle, "settle")] {
            assert_eq!(text(span, "messaging.system"), "leasehold", "{}", span.name);
            assert_eq!(
                text(span, "messaging.operation.type"),
                operation,
                "{}",
                span.name
            );
            assert_eq!(
                text(span, "messaging.destination.name"),
                "mail",
                "{}",
                span.name
            );
            assert_eq!(
                text(span, "messaging.message.id"),
                id.0.to_string(),
                "{}",
                span.name
            );
        }
        let batches: Vec<i64> = receives
            .iter()
            .map(
                |r| match attr(&r.attributes, "messaging.batch.message_count") {
                    Some(Value::I64(n)) => *n,
                    other => panic!("a receive's batch size: {other:?}"),
                },
            )
            .collect();
        assert!(
            batches.contains(&1),
            "the claim that took the job says 1: {batches:?}"
        );
        assert!(
            receives.iter().all(|r| r.span_kind == SpanKind::Client
                && text(r, "messaging.operation.type") == "receive")
        );
        let links: Vec<_> = process
            .links
            .iter()
            .map(|l| (l.span_context.trace_id(), l.span_context.span_id()))
            .collect();
        assert_eq!(
            links,
            [(send.span_context.trace_id(), send.span_context.span_id())],
            "{}: the perform links to its enqueue",
            db.label()
        );
    }
}

#[tokio::test]
async fn each_enqueue_settle_and_claim_span_has_ended_when_its_call_returns() {
    // A provider flushed or shut down right after the call must have the
    // span; on SQLite the driver's connection thread used to hold it a
    // moment longer (a few percent of the calls).
    for db in store_support::backends("otel_span_ends").await {
        let (exporter, _provider, _guard) = record();
        let store = db.store.clone();
        let ended = |name: &str| named(&exporter.get_finished_spans().unwrap(), name).len();
        for n in 1..=100 {
            enqueue_one(&store).await;
            assert_eq!(ended("send mail"), n, "{}: the send span of enqueue {n}", db.label());
        }
        let runner = JobRunner::builder("test.otel")
            .spawn(Worker::new(store.clone(), "mail", Quick).record_every(None))
            .unwrap();
        let (mut performed, mut passes) = (0, 0);
        while performed < 100 && passes < 1_000 {
            let claims = ended("receive mail");
            performed += runner.tick().await.performed as usize;
            passes += 1;
            assert_eq!(ended("settle mail"), performed, "{}: the settle spans after pass {passes}", db.label());
            assert!(ended("receive mail") > claims, "{}: the receive span of pass {passes}", db.label());
        }
        assert_eq!(performed, 100, "{}: every job was performed", db.label());
        runner.dispose().await;
    }
}

/// Says it started, then waits for its signal.
struct Waits(Arc<Notify>);

impl Handler for Waits {
    async fn handle(
        &self,
        _job: &ClaimedJob,
        signal: AbortSignal,
    ) -> Result<Option<serde_json::Value>, BoxError> {
        self.0.notify_one();
        Err(signal.aborted().await.into())
    }
}

#[tokio::test]
async fn a_lost_lease_is_a_lease_lost_event_on_the_process_span() {
    let (exporter, provider, _guard) = record();
    let db = store_support::sqlite_db(Default::default()).await;
    let store = db.store.clone();
    let id = enqueue_one(&store).await;
    let started = Arc::new(Notify::new());
    let worker = Worker::new(store.clone(), "mail", Waits(started.clone())).record_every(None);
    let runner = JobRunner::builder("test.otel")
        .stale_after(Duration::from_secs(10))
        .heartbeat_every(Duration::from_millis(250))
        .spawn(worker)
        .unwrap();
    let pass = tokio::spawn({
        let runner = runner.clone();
        async move { runner.tick().await }
    });
    started.notified().await;
    store
        .cancel(&[id], Some("test"), "me", now())
        .await
        .unwrap();
    assert_eq!(pass.await.unwrap().claim_lost, 1);
    runner.dispose().await;
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let [process] = named(&spans, "process mail")[..] else {
        panic!("one process span: {spans:#?}")
    };
    let events: Vec<_> = process
        .events
        .iter()
        .map(|e| {
            (
                e.name.to_string(),
                attr(&e.attributes, "error.type").map(|v| v.as_str().into_owned()),
            )
        })
        .collect();
    assert_eq!(
        events,
        [("lease_lost".to_owned(), Some("lease_lost".to_owned()))],
        "{process:#?}"
    );
}
