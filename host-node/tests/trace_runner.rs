//! The runner's observers: the trace sink (spans) and the trace
//! journal (job history through the pump), end to end in virtual time.

mod eventlog_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use leasehold::core::Millis;
use leasehold::eventlog::read_log;
use leasehold::pump::{EventSource, Pump, TraceJournal};
use leasehold::runner::{AbortSignal, BoxError, Job, JobRunner};
use leasehold::trace_ring::{ItemOutcome, TraceSink};

use eventlog_support::{FaultyStorage, clock_at, pump_options, temp_log};

/// Three items; the second one fails.
struct ThreeItems {
    next: AtomicU64,
}

impl Job for ThreeItems {
    type Item = u64;

    async fn claim(&self, _at: Millis) -> Result<Option<u64>, BoxError> {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        Ok((n < 3).then_some(n))
    }

    async fn perform(&self, item: u64, _signal: AbortSignal) -> Result<(), BoxError> {
        tokio::time::sleep(Duration::from_millis(5)).await;
        if item == 1 { Err("smtp refused".into()) } else { Ok(()) }
    }
}

#[tokio::test(start_paused = true)]
async fn a_runner_pass_becomes_a_span_and_its_events_reach_the_log() {
    let (_dir, path) = temp_log();
    let mut builder = Pump::builder(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)));
    let journal = Arc::new(TraceJournal::new("mailer", Some(builder.kicker()), 1_000));
    builder.source(journal.source_name(), Arc::clone(&journal) as Arc<dyn EventSource>);
    let pump = builder.open().await.unwrap();
    let sink = Arc::new(TraceSink::new(8).unwrap());

    // Both consume the core's events inside the process, no sink between.
    let runner = JobRunner::builder("mailer")
        .observe(Arc::clone(&sink) as _)
        .observe(Arc::clone(&journal) as _)
        .spawn(ThreeItems { next: AtomicU64::new(0) })
        .unwrap();
    let report = runner.tick().await;
    assert_eq!((report.claimed, report.performed, report.failed), (3, 2, 1));
    runner.tick().await; // an idle pass: nothing claimed, nothing traced
    runner.dispose().await;

    let spans = sink.spans();
    assert_eq!(spans.len(), 1, "the idle pass cost the ring nothing");
    let span = &spans[0];
    assert_eq!(span.name, "mailer");
    assert_eq!(span.report.claimed, 3);
    let outcomes: Vec<_> = span.items.iter().map(|i| i.outcome).collect();
    assert_eq!(outcomes, vec![ItemOutcome::Performed, ItemOutcome::Failed, ItemOutcome::Performed]);
    assert_eq!(span.items[0].duration_ms, 5);
    assert_eq!(span.items[1].error.as_deref(), Some("smtp refused"));

    pump.flush().await.unwrap();
    let kinds: Vec<String> = read_log(&path, 0).unwrap().records.into_iter().map(|r| r.event.kind).collect();
    assert_eq!(kinds.first().map(String::as_str), Some("pass-start"));
    assert_eq!(kinds.last().map(String::as_str), Some("pass-end"));
    assert_eq!(kinds.iter().filter(|k| *k == "claimed").count(), 3);
    assert_eq!(kinds.iter().filter(|k| *k == "item-failed").count(), 1);
}
