//! Shared by the CLI tests: the built `leasehold` binary on a fresh SQLite
//! file, jobs files, reading the queue back through the library, waiting for
//! a state, and the summary `run` prints.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use leasehold::store::{AttemptOutcome, JobId, JobRecord, JobState, Store};

/// A fresh folder with a queue database in it.
pub struct Scratch {
    pub dir: tempfile::TempDir,
    pub url: String,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("queue.db").display());
        Scratch { dir, url }
    }

    /// On `url` instead (a PostgreSQL schema), with a folder for files.
    pub fn with_url(url: String) -> Scratch {
        Scratch { dir: tempfile::tempdir().expect("temp dir"), url }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `leasehold --database URL --events DIR/events ARGS`, ready to run.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::cargo_bin("leasehold").expect("the leasehold binary is built");
        cmd.env_remove("LEASEHOLD_DATABASE_URL").arg("--database").arg(&self.url);
        cmd.arg("--events").arg(self.path("events")).args(args).current_dir(self.dir.path());
        cmd
    }

    /// The same as a child process (for signals), stdout and stderr piped.
    pub fn spawn(&self, args: &[&str]) -> Child {
        Command::new(assert_cmd::cargo::cargo_bin("leasehold"))
            .env_remove("LEASEHOLD_DATABASE_URL")
            .arg("--database")
            .arg(&self.url)
            .arg("--events")
            .arg(self.path("events"))
            .args(args)
            .current_dir(self.dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("leasehold starts")
    }

    /// Writes a jobs file.
    pub fn jobs_file(&self, lines: &[&str]) -> PathBuf {
        let path = self.path("jobs.txt");
        std::fs::write(&path, lines.join("\n") + "\n").expect("jobs file written");
        path
    }

    /// `enqueue ARGS -- LINE`, answering the printed id.
    pub fn enqueue(&self, args: &[&str], line: &str) -> JobId {
        let mut all = vec!["enqueue"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--", line]);
        let out = self.cmd(&all).output().expect("enqueue runs");
        assert!(out.status.success(), "enqueue failed: {}", String::from_utf8_lossy(&out.stderr));
        JobId(String::from_utf8_lossy(&out.stdout).trim().parse().expect("enqueue prints an id"))
    }

    pub async fn store(&self) -> Store {
        Store::connect(&self.url).await.expect("the test reads the queue")
    }
}

/// Runs `args` and checks the refusal: exit 2, one `leasehold: …` line naming `what`.
pub fn refused(s: &Scratch, args: &[&str], what: &str) {
    let out = s.cmd(args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
    assert_eq!(said.lines().count(), 1, "{args:?}: one line, got {said:?}");
    assert!(said.starts_with("leasehold: ") && said.contains(what), "{args:?}: {said:?} should name {what:?}");
}

/// Runs `args`, which must succeed; answers its stdout.
pub fn stdout(s: &Scratch, args: &[&str]) -> String {
    let out = s.cmd(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `key: value` lines of a `run` summary.
pub fn summary(stdout: &[u8]) -> HashMap<String, String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// Waits (up to `limit`) until `job` is in `state`; answers its record.
pub async fn wait_for_state(store: &Store, job: JobId, state: JobState, limit: Duration) -> JobRecord {
    let start = Instant::now();
    loop {
        let record = store.job(job).await.expect("job readable");
        if record.state == state {
            return record;
        }
        assert!(start.elapsed() < limit, "job {job} still {:?} after {limit:?}, not {state:?}", record.state);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (up to `limit`) for a child to exit; kills it and fails otherwise.
pub fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("leasehold did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `signal` to a child by its id.
pub fn signal(child: &Child, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a child pid");
    rustix::process::kill_process(pid, signal).expect("signal sent");
}

/// Succeeded attempts of a job: exactly one for a job done exactly once.
pub fn succeeded_attempts(job: &JobRecord) -> usize {
    job.attempt_log.iter().filter(|a| a.outcome == AttemptOutcome::Succeeded).count()
}

/// The examples folder of the repository.
pub fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}
