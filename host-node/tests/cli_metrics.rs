//! `leasehold work --metrics ADDR`: the worker process serves its durations
//! and counters at /metrics in the Prometheus text format while it works.

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use cli_support::{Scratch, signal, wait_exit};
use prometheus_parse::{Scrape, Value};

/// `GET /metrics` over plain HTTP/1.0: the status line and the body.
fn get_metrics(addr: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).expect("the metrics endpoint accepts");
    stream.write_all(b"GET /metrics HTTP/1.0\r\nHost: test\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("headers, then the body");
    (head.to_owned(), body.to_owned())
}

fn value(scraped: &Scrape, metric: &str) -> Option<f64> {
    scraped.samples.iter().find(|s| s.metric == metric && s.labels.get("queue") == Some("q")).map(|s| match &s.value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
        Value::Histogram(buckets) => buckets.iter().find(|b| b.less_than.is_infinite()).map_or(0.0, |b| b.count),
        Value::Summary(_) => f64::NAN,
    })
}

#[test]
fn work_serves_its_durations_and_counters_while_it_works() {
    let s = Scratch::new();
    for line in ["true", "true", "false"] {
        s.enqueue(&["--queue", "q", "--max-attempts", "1"], line);
    }
    let mut child = s.spawn(&["work", "--queue", "q", "--concurrency", "2", "--metrics", "127.0.0.1:0"]);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    stderr.read_line(&mut said).unwrap();
    let addr = said
        .trim()
        .strip_prefix("leasehold: metrics at http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("the address is said first: {said:?}"))
        .to_owned();

    let start = Instant::now();
    let (head, scraped) = loop {
        let (head, body) = get_metrics(&addr);
        let scraped = Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text");
        if value(&scraped, "leasehold_worker_dead_lettered_total") == Some(1.0)
            && value(&scraped, "leasehold_worker_succeeded_total") == Some(2.0)
        {
            break (head, scraped);
        }
        assert!(start.elapsed() < Duration::from_secs(20), "the three jobs settle: {body}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"), "{head}");
    assert_eq!(value(&scraped, "leasehold_worker_claimed_total"), Some(3.0));
    assert_eq!(value(&scraped, "leasehold_perform_duration_seconds"), Some(3.0), "each command timed");
    assert!(value(&scraped, "leasehold_claim_duration_seconds").unwrap() >= 3.0, "each claim timed");
    assert!(value(&scraped, "leasehold_renewal_duration_seconds").is_some(), "renewals have their histogram");

    signal(&child, rustix::process::Signal::TERM);
    assert!(wait_exit(&mut child, Duration::from_secs(20)).success());
}

#[test]
fn work_refuses_a_metrics_address_it_cannot_listen_on_and_claims_nothing() {
    let s = Scratch::new();
    let id = s.enqueue(&["--queue", "q"], "true");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = s.cmd(&["work", "--queue", "q", "--until-empty", "--metrics", &addr]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("--metrics {addr}: cannot listen there")), "{stderr}");
    let store = tokio::runtime::Runtime::new().unwrap().block_on(s.store());
    let job = tokio::runtime::Runtime::new().unwrap().block_on(store.job(id)).unwrap();
    assert_eq!(job.attempts, 0, "nothing claimed");
}
