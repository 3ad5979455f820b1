//! The command guard alone (`leasehold __guard WORKER_PID CHANNEL_FD GRACE_MS
//! PROGRAM…`), driven by this test as its worker: a deadline written on the
//! lease channel and not moved ends the command's group (SIGTERM, then
//! SIGKILL once the deadline comes), reported apart from a command's own
//! exit; a deadline moved keeps the command alive; the channel closing ends
//! the group at once.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Now on CLOCK_MONOTONIC, ns (the clock the channel speaks).
fn mono_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Writes the deadline `ms_from_now` ms ahead on the worker's end; answers it.
fn send_deadline(ours: &mut UnixStream, ms_from_now: u64) -> u64 {
    let at = mono_ns() + ms_from_now * 1_000_000;
    ours.write_all(&at.to_le_bytes()).expect("deadline written");
    at
}

/// The guard (see [`guard`]) on a `sleep 30` that writes its pid first,
/// with the command's pid once it runs.
fn guarded_sleep(grace_ms: u64, first_deadline_ms: u64) -> (Child, UnixStream, u64, i32, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let (child, ours, deadline) = guard(grace_ms, first_deadline_ms, &format!("echo $$ > {}; exec sleep 30", pid_file.display()));
    let pid = pid_in(&pid_file);
    (child, ours, deadline, pid, dir)
}

/// A channel and the guard on it running `sh -c script`, with `grace_ms`.
fn guard(grace_ms: u64, first_deadline_ms: u64, script: &str) -> (Child, UnixStream, u64) {
    let (mut ours, theirs) = UnixStream::pair().expect("socket pair");
    // Inherited by the guard (std keeps descriptors without close-on-exec).
    rustix::io::fcntl_setfd(&theirs, rustix::io::FdFlags::empty()).expect("inheritable");
    let first = send_deadline(&mut ours, first_deadline_ms);
    let child = Command::new(assert_cmd::cargo::cargo_bin("leasehold"))
        .args(["__guard", &std::process::id().to_string(), &theirs.as_raw_fd().to_string(), &grace_ms.to_string()])
        .args(["sh", "-c", script])
        .process_group(0)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the guard starts");
    drop(theirs);
    (child, ours, first)
}

fn pid_in(file: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the command never wrote its pid");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn alive(pid: i32) -> bool {
    rustix::process::test_kill_process(rustix::process::Pid::from_raw(pid).expect("a pid")).is_ok()
}

fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(start.elapsed() < limit, "the guard did not exit within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn stderr(child: &mut Child) -> String {
    let mut text = String::new();
    child.stderr.take().expect("piped").read_to_string(&mut text).expect("stderr read");
    text
}

/// Everything the guard wrote back on the channel (it has exited).
fn reported(ours: &mut UnixStream) -> Vec<u8> {
    ours.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut bytes = Vec::new();
    let _ = ours.read_to_end(&mut bytes);
    bytes
}

#[test]
fn a_deadline_left_unmoved_ends_the_group_with_sigterm_then_sigkill_by_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let (pid_file, term_file) = (dir.path().join("pid"), dir.path().join("term"));
    // The command notes SIGTERM and keeps running: only SIGKILL ends it.
    let script = format!(
        "trap 'echo term >> {}' TERM; echo $$ > {}; while :; do sleep 0.05; done",
        term_file.display(),
        pid_file.display()
    );
    // First deadline far enough out that the command is up (trap set) before
    // the SIGTERM, however loaded the machine.
    let (mut child, mut ours, deadline) = guard(400, 3_000, &script);
    let pid = pid_in(&pid_file);
    let status = wait(&mut child, Duration::from_secs(10));
    let lead = leasehold::core::lease::WATCHDOG_LEAD_MS * 1_000_000;
    assert!(mono_ns() >= deadline - lead, "SIGKILL waited until just before the deadline");
    assert_eq!(status.code(), Some(124), "{status:?}");
    assert!(!alive(pid), "the command is gone");
    assert!(std::fs::read_to_string(&term_file).unwrap_or_default().contains("term"), "SIGTERM came first");
    assert_eq!(reported(&mut ours), b"E", "the guard reported on the channel that it ended the command");
    let said = stderr(&mut child);
    assert!(said.contains("leasehold-guard: the lease's exit deadline passed with no renewal confirmed"), "{said}");
}

#[test]
fn a_command_that_ends_on_sigterm_is_reaped_without_waiting_for_the_deadline() {
    let (mut child, mut ours, deadline, pid, _dir) = guarded_sleep(5_000, 7_000);
    let status = wait(&mut child, Duration::from_secs(10));
    assert!(mono_ns() < deadline, "the group was empty before the deadline");
    assert_eq!(status.code(), Some(124));
    assert!(!alive(pid));
    assert_eq!(reported(&mut ours), b"E");
}

#[test]
fn a_deadline_moved_by_every_renewal_keeps_the_command_running_and_a_closed_channel_ends_it() {
    let (mut child, mut ours, _, pid, _dir) = guarded_sleep(200, 3_000);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1_500) {
        send_deadline(&mut ours, 500);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(alive(pid), "three times the first deadline later, the command runs on");
    assert!(child.try_wait().unwrap().is_none());
    // The worker gone: the guard ends its group, itself included, at once.
    drop(ours);
    let status = wait(&mut child, Duration::from_secs(2));
    assert_eq!(status.signal(), Some(9), "{status:?}");
    // An orphan now, reaped by init: give it the time that takes.
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!alive(pid), "the command went with its group");
}

#[test]
fn a_command_exiting_124_itself_is_not_taken_for_one_the_guard_ended() {
    let (mut child, mut ours, _) = guard(200, 10_000, "exit 124");
    let status = wait(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(124));
    assert_eq!(reported(&mut ours), b"", "no report: the command ended by itself");
    assert!(!stderr(&mut child).contains("leasehold-guard"));
}
