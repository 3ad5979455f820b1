//! `--otlp-endpoint URL` (or OTEL_EXPORTER_OTLP_ENDPOINT): the command's spans
//! go to a collector's /v1/traces as OTLP protobuf over HTTP; without either,
//! nothing is sent.

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use cli_support::Scratch;

/// A collector that answers 200 to every request and hands over each
/// request's line, content type and body.
fn collector() -> (String, mpsc::Receiver<(String, String, Vec<u8>)>) {
    slow_collector(Duration::ZERO)
}

/// [`collector`] answering each request `delay` after reading it.
fn slow_collector(delay: Duration) -> (String, mpsc::Receiver<(String, String, Vec<u8>)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sent, received) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let (mut length, mut kind) = (0usize, String::new());
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap_or((header, ""));
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "content-type" => kind = value.trim().to_owned(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            // Handed over before the answer, so it is there once the command has ended.
            let _ = sent.send((line.trim_end().to_owned(), kind, body));
            std::thread::sleep(delay);
            stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n").unwrap();
        }
    });
    (url, received)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn enqueue_and_work_export_their_spans_to_the_collector_named() {
    let (url, received) = collector();
    let s = Scratch::new();
    s.cmd(&["--otlp-endpoint", &url, "enqueue", "--queue", "q", "--", "true"]).assert().success();
    let (line, kind, body) = received.recv_timeout(Duration::from_secs(20)).expect("the enqueue's spans are sent");
    assert_eq!(line, "POST /v1/traces HTTP/1.1");
    assert_eq!(kind, "application/x-protobuf");
    assert!(contains(&body, "send q") && contains(&body, "leasehold"), "the producer span: {body:?}");

    s.cmd(&["work", "--queue", "q", "--until-empty"]).env("OTEL_EXPORTER_OTLP_ENDPOINT", &url).assert().success();
    let mut names = Vec::new();
    while let Ok((_, _, body)) = received.recv_timeout(Duration::from_secs(5)) {
        names.extend(["receive q", "process q", "settle q"].into_iter().filter(|name| contains(&body, name)));
    }
    for name in ["receive q", "process q", "settle q"] {
        assert!(names.contains(&name), "{name} was exported: {names:?}");
    }
}

#[test]
fn without_an_endpoint_nothing_is_sent() {
    let (url, received) = collector();
    let s = Scratch::new();
    let out = s.cmd(&["enqueue", "--", "true"]).env_remove("OTEL_EXPORTER_OTLP_ENDPOINT").output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(received.recv_timeout(Duration::from_millis(500)).is_err(), "nothing reached {url}");
}

#[test]
fn the_command_waits_for_a_slow_collector_within_the_export_timeout() {
    // Answers after 6 s: more than the SDK's default 5 s wait at shutdown, less than the 8 s export timeout.
    let (url, received) = slow_collector(Duration::from_secs(6));
    let s = Scratch::new();
    let out = s
        .cmd(&["--otlp-endpoint", &url, "enqueue", "--queue", "q", "--", "true"])
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "8000")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, _, body) = received.try_recv().expect("the collector had the spans before the command ended");
    assert!(contains(&body, "send q"), "the producer span: {body:?}");
}

#[test]
fn an_export_timeout_that_is_not_milliseconds_is_refused_before_anything_is_queued() {
    let (url, _received) = collector();
    let s = Scratch::new();
    let out = s
        .cmd(&["--otlp-endpoint", &url, "enqueue", "--queue", "q", "--", "true"])
        .env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10s")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT is \"10s\"") && stderr.contains("milliseconds"), "{stderr}");
    assert!(!s.path("queue.db").exists(), "nothing was queued");
}
