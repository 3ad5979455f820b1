//! `leasehold work` started before its PostgreSQL server answers (a worker
//! started before its database, or during a restart): it says so once, tries
//! again with backoff, and works the queue once the server is reachable
//! (issue 5: "a database that is unreachable at start: clear error; the
//! runner backs off and recovers when it returns"). Interrupted while it
//! waits, it stops (code 130) without having claimed anything. A server that
//! answers with an error fails at once.
//!
//! The server is made unreachable without stopping the shared test cluster:
//! the worker is pointed at a socket folder of its own, empty at first, and
//! the cluster's socket is linked into it later.

mod cli_support;
mod store_support;

use cli_support::{Scratch, signal, wait_exit, wait_for_state};
use leasehold::store::JobState;
use rustix::process::Signal;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `url` with its `host=` socket folder swapped for `folder`; the cluster's
/// own folder and port, or `None` for a URL that is not a Unix socket one.
fn behind_folder(url: &str, folder: &Path) -> Option<(String, PathBuf, String)> {
    let param = |name: &str| {
        url.split(['?', '&']).find_map(|kv| kv.strip_prefix(name).map(str::to_owned))
    };
    let host = param("host=").filter(|h| h.starts_with('/'))?;
    let port = param("port=").unwrap_or_else(|| "5432".to_owned());
    let moved = url.replacen(&format!("host={host}"), &format!("host={}", folder.display()), 1);
    Some((moved, PathBuf::from(host), port))
}

/// A fresh schema of the test cluster, and a URL of it behind `folder`, a
/// socket folder of its own that is empty until the test links the
/// cluster's socket (`socket_folder`, `.s.PGSQL.<port>`) into it.
struct Unreachable {
    url: String,
    moved: String,
    folder: tempfile::TempDir,
    socket_folder: PathBuf,
    port: String,
}

async fn unreachable(name: &str) -> Option<Unreachable> {
    let url = store_support::pg_schema_url(name).await?;
    let folder = tempfile::tempdir().unwrap();
    let Some((moved, socket_folder, port)) = behind_folder(&url, folder.path()) else {
        println!("skipping: the test cluster is not reached through a Unix socket folder");
        return None;
    };
    Some(Unreachable { url, moved, folder, socket_folder, port })
}

/// Reads what the child wrote on stderr so far (it is still running).
fn stderr_until(child: &mut std::process::Child, wanted: &str, limit: Duration) -> String {
    let mut err = child.stderr.take().expect("stderr piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut said = Vec::new();
    while start.elapsed() < limit && !String::from_utf8_lossy(&said).contains(wanted) {
        if let Ok(bytes) = rx.recv_timeout(Duration::from_millis(100)) {
            said.extend(bytes);
        }
    }
    String::from_utf8_lossy(&said).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn work_waits_for_an_unreachable_server_and_works_once_it_answers() {
    let Some(Unreachable { url, moved, folder, socket_folder, port }) = unreachable("cli_wait_db").await else {
        return;
    };
    let real = Scratch::with_url(url);
    let id = real.enqueue(&["--queue", "waits"], "true");

    let s = Scratch::with_url(moved);
    let mut worker = s.spawn(&["work", "--queue", "waits", "--until-empty"]);
    let said = stderr_until(&mut worker, "trying again", Duration::from_secs(20));
    assert!(said.contains("cannot reach the database") && said.contains("trying again"), "{said}");
    assert_eq!(said.matches("trying again").count(), 1, "said once: {said}");
    assert!(worker.try_wait().unwrap().is_none(), "it waits instead of exiting");

    let socket = format!(".s.PGSQL.{port}");
    std::os::unix::fs::symlink(socket_folder.join(&socket), folder.path().join(&socket)).unwrap();
    let status = wait_exit(&mut worker, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let job = real.store().await.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded);
}

#[tokio::test(flavor = "multi_thread")]
async fn work_interrupted_while_it_waits_for_its_server_stops_cleanly() {
    let Some(Unreachable { moved, .. }) = unreachable("cli_wait_db_int").await else { return };
    let s = Scratch::with_url(moved);
    let mut worker = s.spawn(&["work", "--queue", "waits"]);
    let said = stderr_until(&mut worker, "trying again", Duration::from_secs(20));
    assert!(said.contains("trying again"), "{said}");
    signal(&worker, Signal::INT);
    let status = wait_exit(&mut worker, Duration::from_secs(20));
    // Not 0: a script's `work --until-empty && …` must not take it for a
    // drained queue.
    assert_eq!(status.code(), Some(130), "{status:?}");
}

/// A server that answers with an error (here: no such database) will not
/// answer otherwise later: an error at once, not a wait.
#[tokio::test(flavor = "multi_thread")]
async fn work_against_a_database_that_does_not_exist_fails_at_once() {
    let Some(url) = store_support::pg_schema_url("cli_wait_db_none").await else { return };
    let Some((before, after)) = url.split_once('?') else { return };
    let Some(slash) = before.rfind('/') else { return };
    let s = Scratch::with_url(format!("{}/no_such_database_here?{after}", &before[..slash]));
    let out = s.cmd(&["work", "--queue", "q"]).timeout(Duration::from_secs(30)).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no_such_database_here") && !said.contains("trying again"), "{said}");
}

/// A SQLite file that can not be opened does not mend by waiting: an error
/// at once.
#[test]
fn work_on_a_sqlite_file_it_can_not_open_fails_at_once() {
    let s = Scratch::with_url("sqlite:///nonexistent-folder-for-leasehold/queue.db".to_owned());
    let out = s.cmd(&["work", "--queue", "q"]).timeout(Duration::from_secs(20)).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no folder /nonexistent-folder-for-leasehold for the database"), "{said}");
    assert!(!said.contains("trying again"), "a missing folder does not mend by waiting: {said}");
}

/// `work` on a SQLite file that does not exist yet creates it (a worker may
/// start before anything is queued) and says so, so a mistyped path does not
/// wait on an empty queue in silence.
#[test]
fn work_on_a_missing_sqlite_file_says_it_creates_it() {
    let s = Scratch::new();
    let out = s.cmd(&["work", "--queue", "q", "--until-empty"]).timeout(Duration::from_secs(30)).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no database at") && said.contains("yet: created it (an empty queue)"), "{said}");
    assert!(s.path("queue.db").exists());
    let again = s.cmd(&["work", "--queue", "q", "--until-empty"]).timeout(Duration::from_secs(30)).output().unwrap();
    assert!(!String::from_utf8_lossy(&again.stderr).contains("created it"), "{again:?}");
}

/// A server that refuses for now with an error that passes (here: the role
/// is out of connection slots, SQLSTATE 53300; a server starting up or
/// shutting down answers 57P03 the same way) is waited for too.
#[tokio::test(flavor = "multi_thread")]
async fn work_waits_while_the_server_refuses_for_now() {
    let Some(url) = store_support::pg_schema_url("cli_wait_db_slots").await else { return };
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    let role = "leasehold_wait_test";
    for sql in [
        format!("DROP ROLE IF EXISTS {role}"),
        format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 0"),
        format!("GRANT ALL ON SCHEMA t_cli_wait_db_slots TO {role}"),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&admin).await.unwrap();
    }
    let Some(as_role) = url.strip_prefix("postgres://postgres@").map(|rest| format!("postgres://{role}@{rest}")) else {
        println!("skipping: the test cluster URL does not name the postgres user");
        return;
    };
    let s = Scratch::with_url(as_role);
    let mut worker = s.spawn(&["work", "--queue", "slots", "--until-empty"]);
    let said = stderr_until(&mut worker, "trying again", Duration::from_secs(20));
    assert!(said.contains("too many connections") && said.contains("trying again"), "{said}");
    assert!(worker.try_wait().unwrap().is_none(), "it waits instead of exiting");

    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER ROLE {role} CONNECTION LIMIT -1"))).execute(&admin).await.unwrap();
    let status = wait_exit(&mut worker, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    drop(worker);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP OWNED BY {role}; DROP ROLE {role}")))
        .execute(&admin)
        .await
        .unwrap();
}

/// Ends every server connection that named itself `application` (the
/// worker's), as a server that stops does.
async fn end_connections(url: &str, application: &str) {
    let admin = sqlx::PgPool::connect(url).await.unwrap();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1")
        .bind(application)
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
}

/// A worker whose server went away while it worked (its socket taken away
/// and its connections ended, as when the server stops) claims the job
/// queued meanwhile within 2 s of the server answering again, however long
/// the outage lasted: its failing claims back off to at most the core's
/// recovery cap, not to 5 s or more.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_claims_within_two_seconds_of_its_server_answering_again() {
    let Some(Unreachable { url, moved, folder, socket_folder, port }) = unreachable("cli_wait_db_back").await else {
        return;
    };
    let application = "leasehold_recovery_test";
    let socket = format!(".s.PGSQL.{port}");
    let link = folder.path().join(&socket);
    std::os::unix::fs::symlink(socket_folder.join(&socket), &link).unwrap();
    let real = Scratch::with_url(url.clone());
    let store = real.store().await;
    let s = Scratch::with_url(format!("{moved}&application_name={application}"));
    let mut worker = s.spawn(&["work", "--queue", "back", "--concurrency", "2", "--stale-after", "3s"]);
    // Its warnings are not read here, but must not fill the pipe.
    let mut err = worker.stderr.take().expect("stderr piped");
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let first = real.enqueue(&["--queue", "back"], "true");
    wait_for_state(&store, first, JobState::Succeeded, Duration::from_secs(30)).await;

    std::fs::remove_file(&link).unwrap();
    end_connections(&url, application).await;
    // Long enough for any backoff to reach its cap.
    tokio::time::sleep(Duration::from_secs(12)).await;
    // Queued behind the worker's back: no wake-up reaches it.
    let second = real.enqueue(&["--queue", "back"], "true");
    let back = leasehold::pump::unix_now_ms();
    std::os::unix::fs::symlink(socket_folder.join(&socket), &link).unwrap();
    let done = wait_for_state(&store, second, JobState::Succeeded, Duration::from_secs(30)).await;
    let claimed = done.attempt_log.first().expect("an attempt").started_at.0;
    signal(&worker, Signal::INT);
    wait_exit(&mut worker, Duration::from_secs(20));
    let waited = claimed.saturating_sub(back);
    println!("claimed {waited} ms after the server answered again");
    assert!(waited < 2_000, "claimed {waited} ms after the server answered again");
}
