//! The same-host pid probe (seed 003 `sameHostPidProbe`) against the real
//! operating system: real children, real `/proc`, real `kill(pid, 0)`.
#![cfg(target_os = "linux")]

use std::process::{Child, Command};
use std::thread::sleep;
use std::time::{Duration, Instant};

use leasehold::core::Millis;
use leasehold::core::lease::{EvidenceKind, LivenessCheck, LivenessContext, LivenessEvidence, OwnerId};
use leasehold::liveness::{PidVerdict, ProcStat, SameHostPidProbe, current_owner};

/// An owner record for `pid` on this host, as `current_owner` would have
/// written it for that process.
fn owner_for(pid: u32) -> OwnerId {
    OwnerId {
        pid,
        nonce: "recorded-owner".into(),
        start_time: ProcStat::read(pid).map(|s| s.start_time),
        ..current_owner()
    }
}

/// Spawns `true` and waits, without reaping it, until `/proc` shows it as a
/// zombie. Bounded: a child that never turns into a zombie fails the test.
/// The caller reaps it (`wait`) once done.
#[allow(clippy::zombie_processes, reason = "leaving the child unreaped is the point; callers reap it")]
fn zombie_child() -> Child {
    let child = Command::new("true").spawn().expect("spawn `true`");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if ProcStat::read(child.id()).is_some_and(|stat| stat.state == 'Z') {
            return child;
        }
        assert!(Instant::now() < deadline, "child {} never became a zombie", child.id());
        sleep(Duration::from_millis(1));
    }
}

fn is_alive(probe: &SameHostPidProbe, expected: &OwnerId, claimant: &OwnerId) -> bool {
    let context = LivenessContext { claimant, heartbeat_at: Some(Millis(0)), now: Millis(1_000_000) };
    probe.is_alive(expected, &context)
}

#[test]
fn current_process_is_alive() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    let claimant = current_owner();
    assert_eq!(probe.verdict(&me, &claimant), PidVerdict::Running);
    assert!(is_alive(&probe, &me, &claimant));
}

#[test]
fn stopped_child_is_not_alive_until_continued() {
    let probe = SameHostPidProbe::new();
    let mut child = Command::new("sleep").arg("60").spawn().expect("spawn `sleep`");
    let recorded = owner_for(child.id());
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).expect("pid fits i32")).expect("non-zero pid");
    rustix::process::kill_process(pid, rustix::process::Signal::STOP).expect("SIGSTOP the child");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ProcStat::read(child.id()).is_some_and(|stat| stat.state == 'T') {
        assert!(Instant::now() < deadline, "child {} never showed as stopped", child.id());
        sleep(Duration::from_millis(1));
    }
    assert_eq!(probe.verdict(&recorded, &current_owner()), PidVerdict::Stopped('T'));
    assert!(!is_alive(&probe, &recorded, &current_owner()));
    // A stopped owner may resume: no pid-dead evidence, the expired lease decides.
    assert_eq!(probe.evidence(&recorded, &current_owner(), Millis(7)), None);
    rustix::process::kill_process(pid, rustix::process::Signal::CONT).expect("SIGCONT the child");
    let deadline = Instant::now() + Duration::from_secs(10);
    while ProcStat::read(child.id()).is_some_and(|stat| stat.is_stopped()) {
        assert!(Instant::now() < deadline, "child {} never continued", child.id());
        sleep(Duration::from_millis(1));
    }
    assert!(is_alive(&probe, &recorded, &current_owner()));
    child.kill().expect("kill child");
    child.wait().expect("reap child");
}

#[test]
fn reaped_child_is_dead() {
    let probe = SameHostPidProbe::new();
    let mut child = zombie_child();
    // Recorded while the process still exists, as its own current_owner would.
    let recorded = owner_for(child.id());
    assert!(recorded.start_time.is_some());
    child.wait().expect("reap child");
    let verdict = probe.verdict(&recorded, &current_owner());
    // ESRCH; or, if another process took the pid in between, the start time
    // tells it apart. Either way: dead.
    assert!(
        matches!(verdict, PidVerdict::NoSuchProcess | PidVerdict::PidReused { .. }),
        "reaped child answered {verdict:?}"
    );
    assert!(!is_alive(&probe, &recorded, &current_owner()));
}

#[test]
fn reaped_child_without_recorded_start_time_is_dead_by_esrch() {
    let probe = SameHostPidProbe::new();
    let mut child = Command::new("true").spawn().expect("spawn `true`");
    let pid = child.id();
    child.wait().expect("reap child");
    let recorded = OwnerId { start_time: None, ..owner_for(pid) };
    // The pid may (rarely) be reused at once; only assert when it was not.
    if ProcStat::read(pid).is_none() {
        assert_eq!(probe.verdict(&recorded, &current_owner()), PidVerdict::NoSuchProcess);
    }
}

#[test]
fn unreaped_child_zombie_is_dead() {
    let probe = SameHostPidProbe::new();
    let mut child = zombie_child();
    let recorded = owner_for(child.id());
    assert_eq!(probe.verdict(&recorded, &current_owner()), PidVerdict::Exited);
    assert!(!is_alive(&probe, &recorded, &current_owner()));
    child.wait().expect("reap child");
}

#[test]
fn recorded_start_time_that_does_not_match_is_dead() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    let started = me.start_time.expect("/proc/self/stat readable on Linux");
    let previous_holder = OwnerId { start_time: Some(started.wrapping_sub(1)), ..me.clone() };
    assert_eq!(
        probe.verdict(&previous_holder, &me),
        PidVerdict::PidReused { recorded: started.wrapping_sub(1), found: started }
    );
    assert!(!is_alive(&probe, &previous_holder, &me));
}

#[test]
fn recorded_boot_id_of_another_boot_is_dead() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    assert!(me.boot_id.is_some(), "boot id readable on Linux");
    let before_reboot = OwnerId { boot_id: Some("00000000-0000-0000-0000-000000000000".into()), ..me.clone() };
    assert_eq!(probe.verdict(&before_reboot, &me), PidVerdict::OtherBoot);
    assert!(!is_alive(&probe, &before_reboot, &me));
}

#[test]
fn owner_on_another_host_is_not_probed() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    // This very process's pid: a probe would find it alive; the answer is false.
    let elsewhere = OwnerId { host_id: format!("other-{}", me.host_id), ..me.clone() };
    assert_eq!(probe.verdict(&elsewhere, &me), PidVerdict::OtherHost);
    assert!(!is_alive(&probe, &elsewhere, &me));
    // Host is checked before anything else: an invalid pid there is not alive either.
    let invalid_elsewhere = OwnerId { pid: 0, ..elsewhere };
    assert_eq!(probe.verdict(&invalid_elsewhere, &me), PidVerdict::OtherHost);
}

#[test]
fn invalid_pid_is_alive() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    for pid in [0, i32::MAX as u32 + 1, u32::MAX] {
        let recorded = OwnerId { pid, start_time: None, ..me.clone() };
        assert_eq!(probe.verdict(&recorded, &me), PidVerdict::InvalidPid, "pid {pid}");
        assert!(is_alive(&probe, &recorded, &me));
    }
}

/// pid 1 belongs to root. Unprivileged, `kill(1, 0)` answers `EPERM`, which
/// must read as alive; as root (as in CI) it is delivered, also alive. The
/// EPERM rule itself is unit-tested through `classify` either way; to see it
/// on the real OS as root, run this test binary as `runuser -u nobody --`.
#[test]
fn pid_one_owned_by_root_is_alive() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    let init = owner_for(1);
    let verdict = probe.verdict(&init, &me);
    if rustix::process::geteuid().is_root() {
        assert_eq!(verdict, PidVerdict::Running);
    } else {
        assert_eq!(verdict, PidVerdict::Unknown(Some(rustix::io::Errno::PERM.raw_os_error())));
    }
    assert!(is_alive(&probe, &init, &me));
}

#[test]
fn dead_owner_on_this_host_yields_pid_dead_evidence_at_now() {
    let probe = SameHostPidProbe::new();
    let me = current_owner();
    let mut child = zombie_child();
    let recorded = owner_for(child.id());
    assert_eq!(
        probe.evidence(&recorded, &me, Millis(42)),
        Some(LivenessEvidence { kind: EvidenceKind::SameHostPidDead, checked_at: Millis(42) })
    );
    child.wait().expect("reap child");
    assert_eq!(probe.evidence(&me, &me, Millis(42)), None, "alive: no evidence");
    let elsewhere = OwnerId { host_id: "elsewhere".into(), ..recorded };
    assert_eq!(probe.evidence(&elsewhere, &me, Millis(42)), None, "other host: no pid evidence");
}
