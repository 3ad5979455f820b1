//! The native trace sink (seed 000 `createJobTraceSink`, `resumeJobTrace`):
//! spans from runner events, saved and resumed as JSON, forwarded to
//! `tracing` when asked.

mod eventlog_support;

use leasehold::core::Millis;
use leasehold::core::event::{Event, PassReport};
use leasehold::trace_ring::{ItemOutcome, TraceSink, TraceSinkError};

use eventlog_support::Captured;

fn pass(sink: &TraceSink, runner: &str, t0: u64) {
    sink.record::<String>(runner, &Event::PassStart { at: Millis(t0) });
    sink.record::<String>(runner, &Event::Claimed { at: Millis(t0 + 1), item: 0 });
    sink.record::<String>(runner, &Event::Performed { at: Millis(t0 + 9), item: 0, duration_ms: 8 });
    let report = PassReport { claimed: 1, performed: 1, ..PassReport::IDLE };
    sink.record::<String>(runner, &Event::PassEnd { at: Millis(t0 + 10), report, next_delay_ms: 100 });
}

#[test]
fn the_sink_records_spans_and_resumes_them_from_json() {
    let sink = TraceSink::new(2).unwrap();
    for t in [0, 100, 200] {
        pass(&sink, "mailer", t);
    }
    let spans = sink.spans();
    assert_eq!(spans.iter().map(|s| s.start).collect::<Vec<_>>(), vec![Millis(100), Millis(200)]);
    assert_eq!(spans[0].items[0].outcome, ItemOutcome::Performed);
    assert_eq!(sink.dropped(), 1);

    let json = sink.to_json();
    let resumed = TraceSink::from_json(&json, None).unwrap();
    assert_eq!(resumed.spans(), spans);
    assert_eq!(resumed.dropped(), 1);
    pass(&resumed, "mailer", 300);
    assert_eq!(resumed.spans().last().unwrap().start, Millis(300), "a resumed sink goes on recording");
}

#[test]
fn a_saved_trace_that_does_not_read_is_refused_clearly() {
    let err = TraceSink::from_json("{\"spans\": 3}", None).unwrap_err();
    assert!(matches!(err, TraceSinkError::Json(_)), "{err}");
    let err = TraceSink::from_json(r#"{"version":2,"capacity":5,"dropped":0,"spans":[]}"#, None).unwrap_err();
    assert!(err.to_string().contains("version 2"), "{err}");
}

#[test]
fn finished_spans_are_forwarded_to_tracing_when_asked() {
    // Only this test forwards spans in this binary.
    let captured = Captured::global();
    let quiet = TraceSink::new(4).unwrap();
    pass(&quiet, "a", 0);
    assert_eq!(captured.count("leasehold::trace"), 0, "not forwarded unless asked");
    let loud = TraceSink::new(4).unwrap().forward_to_tracing(true);
    pass(&loud, "a", 0);
    assert_eq!(captured.count("leasehold::trace INFO"), 1, "one event per pass");
    assert_eq!(captured.count("leasehold::trace DEBUG"), 1, "one event per item");
    assert_eq!(captured.count("performed=1"), 1);
}
