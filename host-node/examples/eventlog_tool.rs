//! The native event log at a path, driven from the command line: the other
//! side of the npm package's cross-implementation tests
//! (`pkg/test/eventlog-native.test.mjs`), which write a log from Node.js and
//! read it here, and write one here and read it from Node.js.
//!
//! ```text
//! eventlog_tool write PATH COUNT [--torn]   append COUNT events (64 a frame) and the
//!                                           watermark native → COUNT; --torn then leaves
//!                                           half of one more frame at the end
//! eventlog_tool open PATH                   open (recovering) and close; prints what open found
//! eventlog_tool read PATH [FROM]            the records from FROM on, and the file's summary
//! eventlog_tool hold PATH                   open, print one line, hold the log until stdin closes
//! ```
//!
//! Every command prints one JSON line; epochs are strings (they exceed 2^53).
//! Exit status 1 with `{"error": …, "kind": …}` when the log refuses.

use std::io::{Read, Write};
use std::path::Path;

use leasehold::core::pump::frame::{BatchEncoder, Ending, summarize};
use leasehold::eventlog::{EventLog, EventRecord, LogError, LogOptions, read_log};
use serde_json::{Map, Value, json};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.get(1).map(Path::new).unwrap_or_else(|| fail("usage", "eventlog_tool write|open|read|hold PATH …"));
    let out = match args[0].as_str() {
        "write" => write(path, args.get(2).and_then(|n| n.parse().ok()).unwrap_or(10), args.iter().any(|a| a == "--torn")),
        "open" => open(path),
        "read" => read(path, args.get(2).and_then(|n| n.parse().ok()).unwrap_or(0)),
        "hold" => hold(path),
        other => fail("usage", &format!("unknown command {other}")),
    };
    println!("{out}");
}

fn fail(kind: &str, message: &str) -> ! {
    println!("{}", json!({ "error": message, "kind": kind }));
    std::process::exit(1)
}

fn log_fail(e: &LogError) -> ! {
    let kind = match e {
        LogError::InUse { .. } => "in-use",
        _ => "log",
    };
    fail(kind, &e.to_string())
}

/// The event number `i` this tool writes.
fn event(i: u64) -> EventRecord {
    let mut identity = Map::new();
    identity.insert("n".into(), json!(i));
    EventRecord {
        source: "native".into(),
        at: 1_700_000_000_000 + i,
        kind: "tick".into(),
        identity,
        body: json!({ "i": i, "text": "grüße ✓", "list": [1, 2.5, null, true] }),
    }
}

fn write(path: &Path, count: u64, torn: bool) -> Value {
    let mut opened = EventLog::open(path, LogOptions::default()).unwrap_or_else(|e| log_fail(&e));
    let events: Vec<EventRecord> = (0..count).map(event).collect();
    for (n, chunk) in events.chunks(64).enumerate() {
        let done = ((n * 64 + chunk.len()) as u64).min(count);
        opened.log.append(chunk, [("native", done)]).unwrap_or_else(|e| log_fail(&e));
    }
    let head = opened.log.head();
    opened.log.close();
    if torn {
        // Half of one more frame, as a crash in the middle of its write leaves it.
        let mut frame = Vec::new();
        let mut batch = BatchEncoder::begin(&mut frame);
        for i in 0..8u64 {
            let payload = serde_json::to_vec(&event(count + i)).unwrap_or_default();
            let _ = batch.record(head.next_seq + i, |b| {
                b.extend_from_slice(&payload);
                Ok::<(), LogError>(())
            });
        }
        let _ = batch.finish([("native", count + 8)]);
        let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap_or_else(|e| fail("io", &e.to_string()));
        file.write_all(&frame[..frame.len() / 2]).unwrap_or_else(|e| fail("io", &e.to_string()));
        file.sync_data().unwrap_or_else(|e| fail("io", &e.to_string()));
    }
    json!({ "epoch": head.epoch.to_string(), "nextSeq": head.next_seq, "len": head.len, "created": opened.created })
}

fn open(path: &Path) -> Value {
    let mut opened = EventLog::open(path, LogOptions::default()).unwrap_or_else(|e| log_fail(&e));
    let head = opened.log.head();
    let marks = opened.log.marks().clone();
    opened.log.close();
    json!({
        "created": opened.created, "notice": opened.notice, "epoch": head.epoch.to_string(),
        "nextSeq": head.next_seq, "records": head.records, "len": head.len, "marks": marks,
    })
}

fn read(path: &Path, from: u64) -> Value {
    let read = read_log(path, from).unwrap_or_else(|e| fail("read", &e.to_string()));
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail("io", &e.to_string()));
    let summary = summarize(&bytes).unwrap_or_else(|e| fail("corrupt", &e.to_string()));
    let torn = match summary.ending {
        Ending::Clean => 0,
        Ending::Torn { torn_bytes, .. } => torn_bytes,
    };
    let records: Vec<Value> = read
        .records
        .iter()
        .map(|r| json!({ "seq": r.seq, "event": serde_json::to_value(&r.event).unwrap_or(Value::Null) }))
        .collect();
    json!({
        "epoch": read.epoch.to_string(), "next": read.next, "records": records,
        "validLen": summary.valid_len, "tornBytes": torn, "marks": summary.marks,
    })
}

fn hold(path: &Path) -> Value {
    let mut opened = EventLog::open(path, LogOptions::default()).unwrap_or_else(|e| log_fail(&e));
    println!("{}", json!({ "holding": true, "epoch": opened.log.head().epoch.to_string() }));
    let _ = std::io::stdout().flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    opened.log.close();
    json!({ "released": true })
}
