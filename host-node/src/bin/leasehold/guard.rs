//! The guard each command runs under, so that nothing a job started outlives
//! its lease: not when the worker is killed outright (SIGKILL), and not when
//! the worker is paused (SIGSTOP), starved of CPU or cut off while its
//! command runs on.
//!
//! `leasehold __guard WORKER_PID CHANNEL_FD GRACE_MS PROGRAM [ARGS…]`
//! (`CHANNEL_FD` is `-` for none): a small process (no runtime) that leads
//! the job's process group, starts the command in it, and waits, in one
//! `poll` loop, for three things:
//!
//! - **Its worker's death.** The kernel's parent-death signal (Linux
//!   `PR_SET_PDEATHSIG`) reaches only the worker's direct child, which is this
//!   guard. It is SIGUSR1, which the guard catches; the worker's end of the
//!   channel closing means the same. Either way the guard SIGKILLs its whole
//!   group at once, itself included, and the reclaimed job can never run
//!   beside an orphan.
//! - **The lease's exit deadline**, read from the channel (see `channel`): the
//!   instant by which the command must be dead, which the worker moves forward
//!   on every confirmed renewal (the runner's `AbortSignal::deadline`). It
//!   falls strictly before any other worker may reclaim the job (the core's
//!   lease budget, `W + I + K + G < S`). When it comes within the grace
//!   unmoved (the worker stopped, starved or partitioned from its database),
//!   the guard ends the group itself: it writes [`ENDED`](crate::channel::ENDED) back on the
//!   channel and a line starting [`ENDED_LINE`] on stderr, leaves the group
//!   (joining its worker's), sends SIGTERM to the group and, the core's
//!   `WATCHDOG_LEAD_MS` before the deadline, SIGKILL (so the processes are
//!   gone by the deadline even if the guard wakes late); then it reaps the
//!   command and exits with
//!   [`ENDED_CODE`]. The worker reads that outcome as "the lease lapsed", not
//!   as the command's exit.
//! - **The command's exit**: the guard exits as the command did (a signal
//!   death as 128 + signal), so the worker sees the command's outcome.
//!
//! What no process can do for itself: when the whole machine (or the VM, or
//! a container with everything in it) is frozen, the guard is frozen too and
//! its deadline passes unseen; the command may then wake up after another
//! worker reclaimed the job. That case is covered by the fence on every
//! write: the stale attempt's renewals, results and settlement are refused by
//! the store, so it can change nothing durable there, though any side effect
//! it has outside the database is its own.
//!
//! The worker's own stop signals go to the group: SIGTERM reaches the
//! command, and the guard catches and ignores it (it keeps waiting to report
//! how the command ended); SIGKILL after the grace ends everyone. Signals the
//! job sends its own group are caught and ignored by the guard the same way.
//! Caught signals are reset to their defaults in the command (exec does
//! that), and std resets the signal mask, so the command starts as if run
//! directly.

use crate::channel::{GuardEnd, Heard, monotonic_ns};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use signal_hook::consts::{
    SIGABRT, SIGALRM, SIGCHLD, SIGHUP, SIGINT, SIGIO, SIGPIPE, SIGPROF, SIGQUIT, SIGSYS, SIGTERM, SIGTRAP, SIGUSR1,
    SIGUSR2, SIGVTALRM, SIGXCPU, SIGXFSZ,
};
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, ExitCode};


/// Signals the guard catches (and, but for SIGCHLD and its parent-death
/// SIGUSR1, ignores): every one whose default would end it, so that a job
/// that signals its own process group (`kill -HUP 0`) does not end its guard.
/// Caught, not ignored: an ignored disposition would be inherited by the
/// command, a handler is reset by exec.
const CAUGHT: [i32; 17] = [
    SIGCHLD, SIGUSR1, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF,
    SIGXCPU, SIGXFSZ, SIGIO, SIGSYS, SIGTRAP,
];

/// The argument that makes `leasehold` the guard (not a documented command).
pub const GUARD_ARG: &str = "__guard";

/// Exit code of a guard whose command could not start (as shells use 127
/// for a command not found); stderr carries [`NOT_STARTED`] and the reason.
pub const NOT_STARTED_CODE: u8 = 127;

/// The start of the stderr line a guard writes when its command could not
/// start, before the reason.
pub const NOT_STARTED: &str = "leasehold-guard: cannot start the command: ";

/// Exit code of a guard that ended its command because the lease's exit
/// deadline passed unmoved (as `timeout(1)` uses 124). A command may exit
/// 124 itself: the worker tells the two apart by [`ENDED`](crate::channel::ENDED) on the channel.
pub const ENDED_CODE: u8 = 124;

/// The start of the stderr line a guard writes when it ends its command at
/// the deadline.
pub const ENDED_LINE: &str = "leasehold-guard: the lease's exit deadline passed with no renewal confirmed";

/// Sends SIGKILL to the guard's process group: the command, whatever it
/// started there, and the guard.
fn kill_group() -> ! {
    let _ = rustix::process::kill_current_process_group(Signal::KILL);
    std::process::exit(137)
}

/// The worker is gone: its pid is no longer the guard's parent.
fn orphaned(parent: i32) -> bool {
    rustix::process::getppid().map_or(0, |pid| pid.as_raw_nonzero().get()) != parent
}

/// The guard's arguments.
struct Args<'a> {
    parent: i32,
    channel: Option<GuardEnd>,
    grace_ns: u64,
    program: &'a std::ffi::OsString,
    rest: &'a [std::ffi::OsString],
}

/// Parses `WORKER_PID CHANNEL_FD GRACE_MS PROGRAM [ARGS…]`.
#[allow(unsafe_code)]
fn parse(args: &[std::ffi::OsString]) -> Option<Args<'_>> {
    let [parent, channel, grace, program, rest @ ..] = args else { return None };
    let number = |s: &std::ffi::OsString| s.to_str().and_then(|s| s.parse::<u64>().ok());
    let channel = match channel.to_str()? {
        "-" => None,
        fd => {
            let fd: i32 = fd.parse().ok()?;
            // SAFETY: the worker passed this descriptor to us alone, open,
            // and nothing else in this process uses it.
            let stream = UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
            Some(GuardEnd::new(stream).ok()?)
        }
    };
    Some(Args {
        parent: i32::try_from(number(parent)?).ok()?,
        channel,
        grace_ns: number(grace)?.saturating_mul(1_000_000),
        program,
        rest,
    })
}

/// The self-pipe every caught signal writes a byte to, so `poll` wakes.
fn signal_pipe() -> std::io::Result<UnixStream> {
    let (read, write) = UnixStream::pair()?;
    read.set_nonblocking(true)?;
    for signal in CAUGHT {
        signal_hook::low_level::pipe::register_raw(signal, std::os::fd::AsRawFd::as_raw_fd(&write))?;
    }
    // The handlers write to it for the life of the process.
    std::mem::forget(write);
    Ok(read)
}

/// Runs the guard for `args` (after [`GUARD_ARG`]): `WORKER_PID CHANNEL_FD
/// GRACE_MS PROGRAM [ARGS…]`.
pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let Some(mut args) = parse(args) else { return ExitCode::from(2) };
    // Registered before anything can arrive: a SIGCHLD from a quick command
    // or the worker's death waits in the pipe.
    let Ok(mut wake) = signal_pipe() else { return ExitCode::from(NOT_STARTED_CODE) };
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::set_parent_process_death_signal(Some(Signal::USR1));
    }
    // The worker may have died before the line above took effect.
    if orphaned(args.parent) {
        kill_group();
    }
    let mut child = match Command::new(args.program).args(args.rest).spawn() {
        Ok(child) => child,
        Err(e) => {
            errln!("{NOT_STARTED}{e}");
            return ExitCode::from(NOT_STARTED_CODE);
        }
    };
    let mut deadline: Option<u64> = None;
    let mut ending: Option<Ending> = None;
    // SIGTERM the grace before the deadline (when the worker's own lapse
    // falls), SIGKILL a little before it, so the group is gone by then even
    // with this process woken late.
    let lead_ns = leasehold::core::lease::WATCHDOG_LEAD_MS * 1_000_000;
    let grace_ns = args.grace_ns;
    let term_at = move |at: u64| at.saturating_sub(grace_ns);
    let kill_at = move |at: u64| at.saturating_sub(lead_ns).max(term_at(at));
    loop {
        let now = monotonic_ns();
        if let Some(at) = deadline {
            match &mut ending {
                None if now >= term_at(at) => {
                    ending = Some(Ending::begin(&mut args, at));
                    continue;
                }
                Some(end) if now >= kill_at(at) || end.group_gone(&mut child) => end.finish(&mut child),
                _ => {}
            }
        }
        let wake_at = deadline.map(|at| if ending.is_some() { kill_at(at) } else { term_at(at) });
        // While ending, look at the group every 20 ms: its last process
        // leaving sends the guard nothing once it left the group.
        let wait = match (wake_at, &ending) {
            (Some(at), None) => Some(at.saturating_sub(now)),
            (Some(at), Some(_)) => Some(at.saturating_sub(now).min(20_000_000)),
            (None, _) => None,
        };
        let timeout = wait.map(|ns| Timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ });
        let mut fds = vec![PollFd::new(&wake, PollFlags::IN)];
        // Once ending, no new deadline can call it off: the channel is not
        // read any more (nor polled, which would spin on what it holds).
        if let Some(channel) = args.channel.as_ref().filter(|_| ending.is_none()) {
            fds.push(PollFd::new(channel, PollFlags::IN));
        }
        let _ = rustix::event::poll(&mut fds, timeout.as_ref());
        drop(fds);
        let mut drained = [0u8; 64];
        while matches!(wake.read(&mut drained), Ok(n) if n > 0) {}
        // Our parent-death signal, or the job signalling its own group
        // (`kill -USR1 0`): only a worker that is gone ends the group.
        if orphaned(args.parent) && ending.is_none() {
            kill_group();
        }
        match child.try_wait() {
            Ok(Some(status)) if ending.is_none() => {
                return ExitCode::from(crate::exec::exit_code(status).clamp(0, 255) as u8);
            }
            Ok(_) => {}
            Err(_) if ending.is_none() => return ExitCode::from(NOT_STARTED_CODE),
            Err(_) => {}
        }
        if ending.is_none() {
            match args.channel.as_mut().map_or(Heard::Nothing, GuardEnd::read) {
                Heard::Nothing => {}
                Heard::Deadline(at) => deadline = Some(at),
                Heard::Closed => kill_group(),
            }
        }
    }
}

/// The process group of process `pid`, from `/proc/PID/stat` (`getpgid`
/// answers 0 for a group led from outside this pid namespace, which rustix
/// does not expect), or `None` when it cannot be named here.
fn parent_group(pid: i32) -> Option<Pid> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let pgrp: i32 = rest.split_whitespace().nth(2)?.parse().ok()?;
    Pid::from_raw(pgrp)
}

/// The guard ending its group at the deadline.
struct Ending {
    /// The group's id: the guard's own pid.
    group: Pid,
    /// Whether the guard left the group (it then survives the SIGKILL).
    left: bool,
}

impl Ending {
    /// Reports, leaves the group, and sends it SIGTERM.
    fn begin(args: &mut Args<'_>, deadline: u64) -> Ending {
        if let Some(channel) = args.channel.as_mut() {
            channel.report_ended();
        }
        let late_ms = monotonic_ns().saturating_sub(deadline.saturating_sub(args.grace_ns)) / 1_000_000;
        errln!(
            "{ENDED_LINE}: ended the command (SIGTERM, then SIGKILL after {} ms) before another worker may reclaim its job{}",
            args.grace_ns / 1_000_000,
            if late_ms > 0 { format!(" ({late_ms} ms late)") } else { String::new() }
        );
        let group = rustix::process::getpid();
        // Into the worker's group (same session), so the SIGKILL below does
        // not end the guard, which must still reap and report. A worker
        // whose group this process cannot name (it leads a pid namespace
        // whose group leader lives outside it) leaves the guard in the group:
        // the SIGKILL then ends the guard too, its report already sent.
        let left = parent_group(args.parent).is_some_and(|worker| rustix::process::setpgid(None, Some(worker)).is_ok());
        let _ = rustix::process::kill_process_group(group, Signal::TERM);
        Ending { group, left }
    }

    /// Whether the command exited and, the guard being out of the group,
    /// nothing is left in it.
    fn group_gone(&self, child: &mut Child) -> bool {
        self.left
            && matches!(child.try_wait(), Ok(Some(_)))
            && rustix::process::test_kill_process_group(self.group).is_err()
    }

    /// SIGKILLs the group, reaps the command and exits [`ENDED_CODE`].
    fn finish(&self, child: &mut Child) -> ! {
        let _ = rustix::process::kill_process_group(self.group, Signal::KILL);
        if !self.left {
            // Still in the group: the line above ended the guard too.
            kill_group();
        }
        let _ = child.wait();
        std::process::exit(i32::from(ENDED_CODE))
    }
}
