//! `leasehold ui` over HTTP: the JSON the page reads, the actions and their
//! refusals, the token, read-only, on SQLite and (with LEASEHOLD_TEST_PG_URL)
//! PostgreSQL. The page itself is tested in Chromium (ui_browser.test.mjs).

mod cli_support;
mod store_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;

use cli_support::Scratch;
use serde_json::Value;

/// A running `leasehold ui` and its address.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(scratch: &Scratch, args: &[&str]) -> Server {
    let mut all = vec!["ui", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut child = scratch.spawn(&all);
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("a line");
    let addr = line.split("http://").nth(1).and_then(|rest| rest.split('/').next()).unwrap_or_else(|| panic!("{line}")).to_owned();
    Server { child, addr }
}

/// One HTTP/1.1 request, a POST with the body `{}`; answers the status and the body.
fn request(server: &Server, method: &str, path: &str, headers: &[&str]) -> (u16, String) {
    let body = if method == "POST" { "{}" } else { "" };
    let mut all = vec!["Content-Type: application/json"];
    all.extend_from_slice(headers);
    send(server, method, path, &all, body.as_bytes())
}

/// One HTTP/1.1 request with `body` as it is (`headers` say its type);
/// answers the status and the body.
fn send(server: &Server, method: &str, path: &str, headers: &[&str], body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(&server.addr).expect("connects");
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    // This server's own Host unless the test names another.
    let host = if headers.iter().any(|h| h.starts_with("Host:")) { String::new() } else { format!("Host: {}\r\n", server.addr) };
    write!(stream, "{method} {path} HTTP/1.1\r\n{host}Connection: close\r\nContent-Length: {}\r\n{extra}\r\n", body.len())
        .expect("sends");
    // A server that refuses a large body early may close before it is all sent.
    let _ = stream.write_all(body);
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads");
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

fn json(server: &Server, path: &str) -> Value {
    let (status, body) = request(server, "GET", path, &[]);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

const ACTION: &str = "X-Leasehold-Action: 1";

/// Queue `mail`: two succeeded, one dead, one scheduled; answers the dead id.
fn fill(scratch: &Scratch) -> String {
    for n in ["1", "2"] {
        scratch.cmd(&["enqueue", "--queue", "mail", "--", "echo", n]).assert().success();
    }
    let dead = scratch.cmd(&["enqueue", "--queue", "mail", "--max-attempts", "1", "--", "false"]).output().expect("runs");
    scratch.cmd(&["work", "--queue", "mail", "--until-empty", "--concurrency", "1"]).assert().success();
    scratch.cmd(&["enqueue", "--queue", "mail", "--at", "1h", "--", "echo", "later"]).assert().success();
    String::from_utf8(dead.stdout).expect("utf-8").trim().to_owned()
}

/// A job of queue `other` completed as a `leasehold/postgres` handler or a Rust
/// service completes one: with its answer, no exit code or output. Answers its id.
fn answered_by_another_worker(scratch: &Scratch) -> i64 {
    use leasehold::runner::Clock as _;
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(async {
        let store = scratch.store().await;
        let now = leasehold::runner::TokioClock::new().now();
        let id = store.enqueue("other", &serde_json::json!({ "to": "ada" }), &Default::default(), now).await.unwrap();
        let owner = leasehold::liveness::current_owner();
        let job = store.claim("other", &owner, now, std::time::Duration::from_secs(30)).await.unwrap().expect("the job");
        assert!(store.complete(job.fence(), Some(&serde_json::json!({ "sent": true })), now).await.unwrap().is_updated());
        id.0
    })
}

fn scratches(name: &str) -> Vec<Scratch> {
    let mut all = vec![Scratch::new()];
    let pg = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(store_support::pg_schema_url(name));
    all.extend(pg.map(Scratch::with_url));
    all
}

#[test]
fn the_api_answers_the_counts_a_page_of_jobs_and_a_job_with_its_attempts_and_settlements() {
    for scratch in scratches("ui_api") {
        let dead = fill(&scratch);
        let server = serve(&scratch, &[]);
        let o = json(&server, "/api/overview");
        let mail = &o["overview"]["queues"][0];
        assert_eq!(mail["queue"], "mail", "{o}");
        let counts: Vec<u64> = ["queued", "scheduled", "retrying", "running", "succeeded", "dead", "cancelled"]
            .iter()
            .map(|s| mail["counts"][s].as_u64().expect("a count"))
            .collect();
        assert_eq!(counts, [0, 1, 0, 0, 2, 1, 0], "{}", scratch.url);
        assert_eq!(o["overview"]["succeeded_estimated"], false);
        assert_eq!(o["activity"]["buckets"].as_array().map(Vec::len), Some(60));
        let done: u64 = o["activity"]["buckets"].as_array().unwrap().iter().map(|b| b["done"].as_u64().unwrap()).sum();
        assert_eq!(done, 2);
        assert_eq!(o["workers"].as_array().map(Vec::len), Some(1), "the worker recorded itself");

        let page = json(&server, "/api/jobs?queue=mail&state=dead");
        assert_eq!(page["jobs"].as_array().map(Vec::len), Some(1));
        assert_eq!(page["jobs"][0]["id"].to_string(), dead);
        let first = json(&server, "/api/jobs?limit=2");
        assert_eq!(first["jobs"].as_array().map(Vec::len), Some(2));
        let rest = json(&server, &format!("/api/jobs?limit=2&before={}", first["next"]));
        assert_eq!(rest["jobs"].as_array().map(Vec::len), Some(2));
        assert_eq!(rest["next"], Value::Null);

        let job = json(&server, &format!("/api/jobs/{dead}"));
        assert_eq!(job["job"]["state"], "dead");
        assert_eq!(job["attempts"][0]["exitCode"], 1);
        assert_eq!(job["settlements"][0]["type"], "job-dead-lettered");
        assert_eq!(job["attempts"][0]["result"], Value::Null, "a command's attempt has its exit code and output instead");
        let answered = answered_by_another_worker(&scratch);
        let job = json(&server, &format!("/api/jobs/{answered}"));
        assert_eq!(job["attempts"][0]["result"], serde_json::json!({ "sent": true }), "{job}");
        let (status, body) = request(&server, "GET", "/api/jobs/999999", &[]);
        assert_eq!(status, 404, "{body}");
        let (status, body) = request(&server, "GET", "/api/jobs?state=sleeping", &[]);
        assert_eq!((status, body.contains("is not a state")), (400, true), "{body}");
        let (status, body) = request(&server, "GET", "/metrics", &[]);
        assert_eq!(status, 200);
        assert!(body.contains("leasehold_jobs{"), "{body}");
    }
}

/// Three schedules of queue `mail`: `digest` every 1m, added an hour ago
/// and driven once now (its last run is a job, its next run ahead);
/// `stale` every 1m added an hour ago and never driven (overdue); `nightly`
/// by cron in Europe/Berlin, without overlap, paused. Answers the digest's
/// job id.
fn schedules(scratch: &Scratch) -> i64 {
    use leasehold::runner::Clock as _;
    use leasehold::schedule::Cadence;
    use leasehold::store::ScheduleSpec;
    let minute = std::time::Duration::from_secs(60);
    scratch
        .cmd(&["schedule", "add", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--no-overlap", "--queue", "mail", "--", "./backup.sh", "--full"])
        .assert()
        .success();
    scratch.cmd(&["schedule", "pause", "nightly"]).assert().success();
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(async {
        let store = scratch.store().await;
        let now = leasehold::runner::TokioClock::new().now();
        let hour_ago = leasehold::core::Millis(now.0 - 3_600_000);
        for name in ["digest", "stale"] {
            let spec = ScheduleSpec::new(name, "mail", Cadence::Every(minute), serde_json::json!({ "command": format!("echo {name}") }));
            store.add_schedule(&spec, hour_ago).await.unwrap();
        }
        let round = store.run_due_schedules("mail", now).await.unwrap();
        // `stale` was driven too: take it back to an hour ago by adding it again.
        store.remove_schedule("stale").await.unwrap();
        let spec = ScheduleSpec::new("stale", "mail", Cadence::Every(minute), serde_json::json!({ "command": "echo stale" }));
        store.add_schedule(&spec, hour_ago).await.unwrap();
        round.enqueued.iter().find(|j| j.schedule == "digest").expect("digest enqueued").job.0
    })
}

#[test]
fn the_api_lists_each_schedule_with_its_cadence_pause_next_and_last_run() {
    for scratch in scratches("ui_schedules") {
        // A fresh database, no schedule yet.
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(scratch.store());
        let server = serve(&scratch, &[]);
        let empty = json(&server, "/api/schedules");
        assert_eq!(empty["schedules"], serde_json::json!([]), "{empty}");
        let job = schedules(&scratch);
        let answer = json(&server, "/api/schedules");
        let now = answer["now"].as_u64().expect("now");
        let all = answer["schedules"].as_array().expect("a list");
        let names: Vec<&str> = all.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["digest", "nightly", "stale"], "{}: by name", scratch.url);
        let (digest, nightly, stale) = (&all[0], &all[1], &all[2]);

        assert_eq!((digest["queue"].as_str(), digest["everyMs"].as_u64(), digest["cadence"].as_str()), (Some("mail"), Some(60_000), Some("every 1m")));
        assert_eq!((&digest["cron"], &digest["pausedAt"], &digest["overdue"]), (&Value::Null, &Value::Null, &Value::Bool(false)), "{digest}");
        let next = digest["nextRun"].as_u64().expect("a next run");
        assert!(next > now - 1000 && next <= now + 60_000, "{digest}");
        assert_eq!(digest["lastRun"]["job"], job, "{digest}");
        assert_eq!(digest["lastRun"]["state"], "queued", "{digest}");
        assert!(digest["lastRun"]["slot"].as_u64().unwrap() <= now, "{digest}");
        assert_eq!(digest["command"], "echo digest");
        assert_eq!(digest["policy"], "catch-up one");

        assert_eq!((nightly["cron"].as_str(), nightly["timeZone"].as_str()), (Some("30 2 * * *"), Some("Europe/Berlin")), "{nightly}");
        assert!(nightly["pausedAt"].as_u64().is_some(), "{nightly}");
        assert_eq!((&nightly["lastRun"], &nightly["overdue"]), (&Value::Null, &Value::Bool(false)), "{nightly}");
        assert_eq!(nightly["policy"], "catch-up one, no overlap");
        assert_eq!(nightly["command"], "./backup.sh --full");

        assert_eq!(stale["overdue"], true, "{stale}: its next run is an hour past and no worker drove it");

        // The job of the last run, once settled, is shown as it is now.
        scratch.cmd(&["work", "--queue", "mail", "--until-empty", "--concurrency", "1"]).assert().success();
        let after = json(&server, "/api/schedules");
        assert_eq!(after["schedules"][0]["lastRun"]["state"], "succeeded", "{after}");

        // Paused and resumed from the page.
        let (status, body) = request(&server, "POST", "/api/schedules/digest/pause", &[ACTION]);
        assert_eq!(status, 200, "{body}");
        assert!(json(&server, "/api/schedules")["schedules"][0]["pausedAt"].is_u64());
        let (status, body) = request(&server, "POST", "/api/schedules/nightly/resume", &[ACTION]);
        assert_eq!((status, body.contains("resumed schedule nightly")), (200, true), "{body}");
        assert_eq!(json(&server, "/api/schedules")["schedules"][1]["pausedAt"], Value::Null);
        let (status, body) = request(&server, "POST", "/api/schedules/nightly/resume", &[ACTION]);
        assert_eq!((status, body.contains("was not paused")), (200, true), "{body}");
        let (status, body) = request(&server, "POST", "/api/schedules/nosuch/pause", &[ACTION]);
        assert_eq!(status, 404, "{body}");
        let (status, body) = request(&server, "POST", "/api/schedules/digest/resume", &[]);
        assert_eq!(status, 403, "an action without its header: {body}");
    }
}

#[test]
fn actions_change_the_queue_and_refuse_what_cannot_be_done() {
    for scratch in scratches("ui_actions") {
        let dead = fill(&scratch);
        let server = serve(&scratch, &[]);
        let (status, body) = request(&server, "POST", &format!("/api/jobs/{dead}/retry"), &[]);
        assert_eq!(status, 403, "an action without its header: {body}");
        let (status, body) = request(&server, "POST", &format!("/api/jobs/{dead}/retry"), &[ACTION]);
        assert_eq!(status, 200, "{body}");
        let (status, body) = request(&server, "POST", &format!("/api/jobs/{dead}/retry"), &[ACTION]);
        assert_eq!(status, 409, "a queued job cannot be retried: {body}");
        let (status, body) = request(&server, "POST", &format!("/api/jobs/{dead}/cancel"), &[ACTION]);
        assert_eq!(status, 200, "{body}");
        assert_eq!(json(&server, &format!("/api/jobs/{dead}"))["job"]["state"], "cancelled");
        let (status, _) = request(&server, "POST", "/api/jobs/999999/cancel", &[ACTION]);
        assert_eq!(status, 404);
        let (status, body) = request(&server, "POST", "/api/queues/mail/pause", &[ACTION, "Origin: http://evil.example"]);
        assert_eq!(status, 403, "a foreign origin: {body}");
        let (status, _) = request(&server, "POST", "/api/queues/mail/pause", &[ACTION]);
        assert_eq!(status, 200);
        assert!(json(&server, "/api/overview")["overview"]["queues"][0]["paused_at_ms"].is_u64());
        // A second pause and a second resume are both 200, saying so (the
        // second resume was 409 where the second pause was 200).
        let (status, body) = request(&server, "POST", "/api/queues/mail/pause", &[ACTION]);
        assert_eq!((status, body.contains("queue mail was paused already")), (200, true), "{body}");
        let (status, body) = request(&server, "POST", "/api/queues/mail/resume", &[ACTION]);
        assert_eq!((status, body.contains("resumed queue mail")), (200, true), "{body}");
        let (status, body) = request(&server, "POST", "/api/queues/mail/resume", &[ACTION]);
        assert_eq!((status, body.contains("queue mail was not paused")), (200, true), "{body}");
        assert!(json(&server, "/api/overview")["overview"]["queues"][0]["paused_at_ms"].is_null());
        let (status, _) = request(&server, "POST", "/api/queues/nosuch/pause", &[ACTION]);
        assert_eq!(status, 404);
        let (status, body) = request(&server, "GET", "/", &["Host: evil.example"]);
        assert_eq!(status, 403, "a rebound DNS name is not answered: {body}");
    }
}

#[test]
fn read_only_shows_everything_and_refuses_every_action() {
    let scratch = Scratch::new();
    let dead = fill(&scratch);
    let server = serve(&scratch, &["--read-only"]);
    assert_eq!(json(&server, "/api/overview")["readOnly"], true);
    let (status, body) = request(&server, "POST", &format!("/api/jobs/{dead}/retry"), &[ACTION]);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("read-only"), "{body}");
    assert_eq!(json(&server, &format!("/api/jobs/{dead}"))["job"]["state"], "dead", "nothing changed");
    scratch.cmd(&["schedule", "add", "nightly", "--cron", "0 3 * * *", "--", "true"]).assert().success();
    let (status, body) = request(&server, "POST", "/api/schedules/nightly/pause", &[ACTION]);
    assert_eq!(status, 403, "{body}");
    assert_eq!(json(&server, "/api/schedules")["schedules"][0]["pausedAt"], Value::Null, "nothing changed");
}

#[test]
fn with_a_token_every_request_carries_it() {
    let scratch = Scratch::new();
    fill(&scratch);
    let server = serve(&scratch, &["--token", "s3cret"]);
    assert_eq!(request(&server, "GET", "/api/overview", &[]).0, 401);
    assert_eq!(request(&server, "GET", "/", &[]).0, 401);
    assert_eq!(request(&server, "GET", "/metrics", &["Authorization: Bearer wrong"]).0, 401);
    assert_eq!(request(&server, "GET", "/api/overview", &["Authorization: Bearer s3cret"]).0, 200);
    let (status, _) = request(&server, "GET", "/?token=s3cret", &[]);
    assert_eq!(status, 303, "the login sets the cookie and drops the token from the address");
    let cookie = format!("Cookie: leasehold_ui_token={}", "s3cret".bytes().map(|b| format!("{b:02x}")).collect::<String>());
    assert_eq!(request(&server, "GET", "/api/overview", &[&cookie]).0, 200);
    let refused = scratch.cmd(&["ui", "--listen", "0.0.0.0:0"]).env_remove("LEASEHOLD_UI_TOKEN").output().expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--listen 0.0.0.0:0 is not a loopback address") && said.contains("--token"), "{said}");
}

#[test]
fn every_refusal_is_json_with_the_status_that_fits() {
    let scratch = Scratch::new();
    fill(&scratch);
    let server = serve(&scratch, &[]);
    for (method, path, status, what) in [
        ("POST", "/api/queues/nosuch/resume", 404, "unknown queue"),
        ("GET", "/api/jobs/abc", 400, "abc"),
        ("POST", "/api/jobs/abc/cancel", 400, "abc"),
        ("POST", "/api/jobs/99999999999999999999/retry", 400, "99999999999999999999"),
        ("GET", "/api/jobs?limit=-3", 400, "limit"),
        ("GET", "/api/jobs?before=abc", 400, "before"),
        ("GET", "/api/jobs?before=0", 400, "before must be a job id (a whole number from 1), got 0"),
        ("GET", "/api/jobs?before=-5", 400, "got -5"),
        ("GET", "/api/nothing", 404, "/api/nothing"),
    ] {
        let headers: &[&str] = if method == "POST" { &[ACTION] } else { &[] };
        let (got, body) = request(&server, method, path, headers);
        assert_eq!(got, status, "{method} {path}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {body}"));
        let error = answer["error"].as_str().unwrap_or_else(|| panic!("{method} {path}: no error: {body}"));
        assert!(error.contains(what), "{method} {path}: {error:?} should name {what:?}");
    }
}

/// The dashboard's retry of a job cancelled while it ran says when it is
/// due, as `leasehold retry` does (it said "queued job N again" as if due at once).
#[test]
fn a_retry_from_the_dashboard_says_when_the_job_is_due() {
    let scratch = Scratch::new();
    let id = scratch.enqueue(&["--queue", "r"], "true");
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(async {
        use leasehold::runner::Clock as _;
        let store = scratch.store().await;
        let now = leasehold::runner::TokioClock::new().now();
        let owner = leasehold::liveness::current_owner();
        store.claim("r", &owner, now, std::time::Duration::from_secs(20)).await.unwrap().expect("due");
    });
    let server = serve(&scratch, &[]);
    let (status, body) = request(&server, "POST", &format!("/api/jobs/{id}/cancel"), &[ACTION]);
    assert_eq!(status, 200, "{body}");
    let (status, body) = request(&server, "POST", &format!("/api/jobs/{id}/retry"), &[ACTION]);
    assert_eq!(status, 200, "{body}");
    let message = serde_json::from_str::<Value>(&body).expect("JSON")["message"].as_str().expect("a message").to_owned();
    assert!(message.starts_with(&format!("queued job {id} again, due in ")), "{message}");
    assert!(message.contains(" s (when the lease of its cancelled attempt ends;") && message.contains("window (20 s)"), "{message}");
}

/// A cancel's body that is not JSON, does not fit, comes as another type or
/// is too large is refused as JSON with the status that fits, naming what is
/// wrong (axum answered plain text, a data error with 422); the job is left
/// as it was. A method a path does not take is JSON too.
#[test]
fn a_bad_request_body_is_refused_as_json_and_changes_nothing() {
    let scratch = Scratch::new();
    fill(&scratch);
    let id = scratch.enqueue(&["--queue", "mail"], "true").to_string();
    let server = serve(&scratch, &[]);
    let cancel = format!("/api/jobs/{id}/cancel");
    let json_type = "Content-Type: application/json";
    let large = format!("{{\"reason\": \"{}\"}}", "x".repeat(2 << 20));
    for (headers, body, status, what) in [
        (&[ACTION, json_type][..], "{bad", 400, "the request body is not JSON: key must be a string"),
        (&[ACTION, json_type], "{\"reason\": 5}", 400, "the request body does not fit: reason: invalid type: integer `5`"),
        (&[ACTION, json_type], "{\"reson\": \"typo\"}", 400, "unknown field `reson`"),
        (&[ACTION, "Content-Type: text/plain"], "{\"reason\": \"x\"}", 415, "Content-Type: application/json"),
        (&[ACTION, json_type], large.as_str(), 413, "the request body could not be read"),
    ] {
        let (got, answer) = send(&server, "POST", &cancel, headers, body.as_bytes());
        let shown = &answer[..answer.len().min(300)];
        assert_eq!(got, status, "{headers:?} {shown}");
        let answer: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{headers:?}: not JSON ({e}): {shown}"));
        let error = answer["error"].as_str().unwrap_or_else(|| panic!("no error: {answer}"));
        assert!(error.contains(what), "{error:?} should name {what:?}");
    }
    assert_eq!(json(&server, &format!("/api/jobs/{id}"))["job"]["state"], "queued", "nothing was cancelled");
    let (got, answer) = send(&server, "GET", "/api/queues/mail/pause", &[], b"");
    assert_eq!(got, 405, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"));
    assert_eq!(answer["error"], "/api/queues/mail/pause does not take GET");
    let (got, answer) = send(&server, "POST", "/api/queues/%FF/pause", &[ACTION], b"");
    assert_eq!(got, 400, "{answer}");
    assert!(serde_json::from_str::<Value>(&answer).is_ok_and(|a| a["error"].is_string()), "a bad queue name is JSON too: {answer}");
    // The page's own bodies still do: none, `{}` and a reason.
    let (got, answer) = send(&server, "POST", &cancel, &[ACTION, json_type], b"{\"reason\": \"not needed\"}");
    assert_eq!(got, 200, "{answer}");
    assert_eq!(json(&server, &format!("/api/jobs/{id}"))["job"]["cancellation"]["reason"], "not needed");
}

#[test]
fn localhost_is_a_loopback_address_to_listen_on_and_a_bad_address_is_named() {
    let scratch = Scratch::new();
    fill(&scratch);
    let mut child = scratch.spawn(&["ui", "--listen", "localhost:0"]);
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut line).expect("a line");
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("is at http://127.0.0.1:"), "{line}");
    for (args, what) in [
        (&["ui", "--listen", "my-host:80"][..], "'--listen <LISTEN>': \"my-host:80\" is not an address and port like 127.0.0.1:8080"),
        (&["work", "--metrics", "9187"], "'--metrics <ADDR>': \"9187\" is not an address and port like 127.0.0.1:8080"),
    ] {
        cli_support::refused(&scratch, args, what);
    }
}

/// A change right after a page connected to `/api/live` (the page's data
/// read just before) is announced: five times over, a job queued at once
/// after the `hello` is followed by a `change` within a few polls.
#[test]
fn a_change_just_after_a_page_connects_is_announced() {
    let scratch = Scratch::new();
    fill(&scratch);
    for round in 0..5 {
        let server = serve(&scratch, &[]);
        let mut stream = TcpStream::connect(&server.addr).expect("connects");
        write!(stream, "GET /api/live HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr).expect("sends");
        stream.set_read_timeout(Some(std::time::Duration::from_secs(4))).expect("timeout");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        while !line.starts_with("event: hello") {
            line.clear();
            assert!(reader.read_line(&mut line).expect("reads the stream") > 0, "the stream ended before its hello");
        }
        scratch.cmd(&["enqueue", "--queue", "mail", "--", "echo", "meanwhile"]).assert().success();
        let mut said = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(n) if n > 0 => said.push_str(&line),
                _ => panic!("round {round}: no change announced within 4 s of a job queued after the hello: {said:?}"),
            }
            if line.starts_with("event: change") {
                break;
            }
        }
    }
}
