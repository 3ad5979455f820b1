//! `status`, `jobs`, `show` and `events` read a SQLite queue this user may
//! not write: they open it read-only, never migrate or create anything, and
//! a WAL file whose `-shm` file cannot be created (a read-only folder) is
//! read as it is.
//!
//! Root may write whatever the modes say, so the commands run as `nobody`
//! (`runuser`) on a root-owned file of mode 0444, in a folder of mode 0555
//! (and, for the file alone, 0777). Skipped, with one line, unless the tests
//! run as root with `runuser` and a `nobody` user.

mod cli_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cli_support::Scratch;

/// Whether the commands can be run as another user here; says why not.
fn can_run_as_nobody() -> bool {
    if !rustix::process::geteuid().is_root() {
        println!("skipping: not root, so the test cannot run commands as `nobody`");
        return false;
    }
    let ok = Command::new("runuser").args(["-u", "nobody", "--", "true"]).status().is_ok_and(|s| s.success());
    if !ok {
        println!("skipping: `runuser -u nobody` is not available");
    }
    ok
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A queue with a done job and a dead-lettered one, checkpointed so its
/// `-wal` and `-shm` files are gone (as after the last worker exits), and
/// the binary copied where `nobody` may run it.
async fn finished_queue(s: &Scratch) -> (tempfile::TempDir, PathBuf) {
    let jobs = s.jobs_file(&["echo fine", "sh -c 'exit 3'"]);
    s.cmd(&["run", jobs.to_str().unwrap(), "--max-attempts", "1"]).assert().code(1);
    let db = s.path("queue.db");
    let pool = sqlx::SqlitePool::connect(&s.url).await.unwrap();
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&pool).await.unwrap();
    pool.close().await;
    for side in ["queue.db-wal", "queue.db-shm"] {
        let _ = std::fs::remove_file(s.path(side));
    }
    let bin = tempfile::Builder::new().prefix("leasehold-bin").tempdir().unwrap();
    chmod(bin.path(), 0o755);
    let copy = bin.path().join("leasehold");
    std::fs::copy(assert_cmd::cargo::cargo_bin("leasehold"), &copy).unwrap();
    chmod(&copy, 0o755);
    chmod(&db, 0o444);
    (bin, copy)
}

/// `leasehold ARGS` on `s`'s queue as `nobody`.
///
/// Tried again when the copied binary is "busy": a process another test
/// thread forked while this one's copy was open for writing holds that
/// descriptor until it execs, and an exec of the copy meanwhile fails with
/// ETXTBSY (runuser exits 126 saying "Text file busy").
fn as_nobody(bin: &Path, s: &Scratch, args: &[&str]) -> Output {
    let mut tries = 0;
    loop {
        let out = Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(bin)
            .arg("--database")
            .arg(&s.url)
            .arg("--events")
            .arg(s.path("events"))
            .args(args)
            .env_remove("LEASEHOLD_DATABASE_URL")
            .output()
            .expect("runuser runs");
        let busy = out.status.code() == Some(126) && String::from_utf8_lossy(&out.stderr).contains("Text file busy");
        tries += 1;
        if !busy || tries == 20 {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn text(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each inspection command, as `nobody`, answers what the queue holds.
fn inspect_all(bin: &Path, s: &Scratch) {
    assert!(text(&as_nobody(bin, s, &["status"])).contains("default"));
    let jobs = text(&as_nobody(bin, s, &["jobs"]));
    assert!(jobs.contains("echo fine") && jobs.contains("exit 3"), "{jobs}");
    let show = text(&as_nobody(bin, s, &["show", "2"]));
    assert!(show.contains("state:     dead") && show.contains("exit:    3"), "{show}");
    let events = text(&as_nobody(bin, s, &["events"]));
    assert!(events.contains("job-done") && events.contains("job-dead-lettered"), "{events}");
}

/// A [`finished_queue`] whose folder has `mode`, inspected by `nobody` with
/// [`inspect_all`]: the scratch, the copied binary and its folder (kept
/// alive), or `None` (after one line saying why) where `nobody` cannot run.
async fn inspected_in_a_folder_of_mode(mode: u32) -> Option<(Scratch, tempfile::TempDir, PathBuf)> {
    if !can_run_as_nobody() {
        return None;
    }
    let s = Scratch::new();
    let (bin_dir, bin) = finished_queue(&s).await;
    chmod(s.dir.path(), mode);
    inspect_all(&bin, &s);
    Some((s, bin_dir, bin))
}

#[tokio::test]
async fn inspection_reads_a_read_only_file_in_a_read_only_folder() {
    let Some((s, _bin_dir, _)) = inspected_in_a_folder_of_mode(0o555).await else { return };
    assert!(!s.path("queue.db-shm").exists() && !s.path("queue.db-wal").exists(), "nothing was created");
    chmod(s.dir.path(), 0o700);
}

#[tokio::test]
async fn inspection_reads_a_read_only_file_in_a_folder_it_may_write() {
    let Some((s, _bin_dir, bin)) = inspected_in_a_folder_of_mode(0o777).await else { return };
    // Nothing was written to the file: still the bytes root left.
    let out = as_nobody(&bin, &s, &["enqueue", "--", "true"]);
    assert!(!out.status.success(), "a write is refused: {out:?}");
    chmod(s.dir.path(), 0o700);
}
