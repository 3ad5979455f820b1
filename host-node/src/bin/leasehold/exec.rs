//! Running one queued command line as a child process.
//!
//! A line runs without a shell unless it needs one: when it holds none of the
//! shell's special characters (`| & ; < > ( ) $ \` \ " ' * ? [ ] # ~ { } =`
//! or a newline) it is split on white space and executed directly; otherwise
//! it runs as `sh -c LINE`. The child gets its own process group, so a stop
//! reaches everything a shell line started.
//!
//! The child is this tool's guard (see `guard`), which starts the command and
//! holds the lease's exit deadline that the worker sends it over a socket
//! (see `channel`) and moves on every confirmed renewal: if this process is
//! stopped, starved or cut off past it, the guard ends the command's group
//! by itself before another worker may reclaim the job. A whole machine or VM
//! frozen stops the guard too; that case is left to the fence on every
//! write, which refuses whatever the stale attempt tries to record.

use crate::channel::{WorkerEnd, monotonic_ns_of};
use leasehold::runner::AbortSignal;
use std::future::Future;
use std::os::fd::{AsRawFd, RawFd};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

/// Without a guard (this binary could not be found again), the command's
/// own process gets SIGKILL when its worker dies (Linux `PR_SET_PDEATHSIG`);
/// processes it started are not covered then.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe system call (prctl); it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// Lets the child keep descriptor `fd` across exec: it is opened with
/// close-on-exec (so no other child this process starts gets it), and the
/// flag is cleared in this child alone, after the fork.
#[allow(unsafe_code)]
fn inherit(cmd: &mut Command, fd: RawFd) {
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe system call (fcntl) on a descriptor the parent keeps
    // open until the spawn returns; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty()).map_err(std::io::Error::from)
        });
    }
}

/// How much of a command's output is kept: the last 64 KiB of stdout and
/// stderr, interleaved as they arrive.
pub const OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// Characters that make a line need `sh -c`.
const SHELL_SPECIAL: &[char] = &[
    '|', '&', ';', '<', '>', '(', ')', '$', '`', '\\', '"', '\'', '*', '?', '[', ']', '#', '~', '{', '}', '=', '\n',
];

/// Commands that exist only inside a shell: a line starting with one runs
/// under `sh -c` too.
const SHELL_BUILTINS: &[&str] = &[
    "exit", "cd", "export", "source", ".", "set", "unset", "alias", "eval", "exec", "read", "ulimit", "umask",
    "trap", "wait", "shift", "return", "readonly", "type", "command", "if", "for", "while", "until", "case",
];

/// The kernel's limit on one argument of a program, in bytes, its
/// terminating NUL included (Linux `MAX_ARG_STRLEN`: 32 pages of 4 KiB). A
/// longer argument makes `exec` fail with "Argument list too long" at every
/// attempt, so such a line is refused before it is queued.
pub const MAX_ARGUMENT_BYTES: usize = 128 * 1024;

/// Refuses a command line with an argument the kernel would not pass on:
/// [`MAX_ARGUMENT_BYTES`] bytes or more (with its NUL, one more than that). The error
/// names the line by its first characters and its length, and the limit;
/// a line run as `sh -c LINE` is one argument as a whole.
pub fn check_argument_sizes(line: &str) -> Result<(), String> {
    let Some(invocation) = Invocation::parse(line) else { return Ok(()) };
    let longest = invocation.argv().into_iter().map(str::len).max().unwrap_or(0);
    // The NUL makes one more byte: `MAX_ARGUMENT_BYTES - 1` bytes still fit.
    if longest < MAX_ARGUMENT_BYTES {
        return Ok(());
    }
    let start: String = line.trim().chars().take(40).collect();
    let what = match invocation {
        Invocation::Shell(_) => format!("the whole line ({} bytes) is one argument of `sh -c`", longest),
        Invocation::Direct(_) => format!("one of its arguments is {longest} bytes"),
    };
    Err(format!(
        "the command line starting {start:?} is too long to run: {what}, and the kernel passes at most {} bytes \
         in one argument (128 KiB with its terminating NUL)",
        MAX_ARGUMENT_BYTES - 1
    ))
}

/// How a line is run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// Executed directly: program and arguments.
    Direct(Vec<String>),
    /// Run by `sh -c`.
    Shell(String),
}

impl Invocation {
    /// The rule above. `None` for a blank line.
    pub fn parse(line: &str) -> Option<Invocation> {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        let first = line.split_whitespace().next().unwrap_or_default();
        if line.contains(SHELL_SPECIAL) || SHELL_BUILTINS.contains(&first) {
            return Some(Invocation::Shell(line.to_string()));
        }
        Some(Invocation::Direct(line.split_whitespace().map(str::to_string).collect()))
    }

    /// The program started: the first word, or `sh` for a shell line.
    pub fn program(&self) -> &str {
        match self {
            Invocation::Direct(argv) => argv.first().map_or("", String::as_str),
            Invocation::Shell(_) => "sh",
        }
    }

    /// Program and arguments.
    fn argv(&self) -> Vec<&str> {
        match self {
            Invocation::Direct(argv) => argv.iter().map(String::as_str).collect(),
            Invocation::Shell(line) => vec!["sh", "-c", line],
        }
    }

    /// The command under its guard (this binary, see `guard`), told the
    /// descriptor of its end of the lease channel (`channel`, inherited by
    /// the guard alone) and the `grace`; or, when this binary can not be
    /// found again, directly with the weaker parent-death signal on the
    /// command alone.
    fn command(&self, channel: Option<RawFd>, grace: Duration) -> Command {
        let argv = self.argv();
        // A unit test's executable is the test harness, not this tool: those
        // tests run commands directly (the guard is tested end to end).
        let me = if cfg!(test) { Err(std::io::ErrorKind::Unsupported.into()) } else { guard_program() };
        match me {
            Ok((program, name)) => {
                let mut cmd = Command::new(program);
                cmd.arg0(name);
                cmd.arg(crate::guard::GUARD_ARG)
                    .arg(std::process::id().to_string())
                    .arg(channel.map_or_else(|| "-".to_owned(), |fd| fd.to_string()))
                    .arg(grace.as_millis().to_string())
                    .args(argv);
                if let Some(fd) = channel {
                    inherit(&mut cmd, fd);
                }
                cmd
            }
            Err(_) => {
                let mut cmd = Command::new(argv[0]);
                cmd.args(&argv[1..]);
                die_with_parent(&mut cmd);
                cmd
            }
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The command exited with this code (a signal death is 128 + signal).
    Exited(i32),
    /// The command could not be started (no such program, …).
    NotStarted(String),
    /// The per-attempt timeout passed; the command was stopped.
    TimedOut,
    /// `stop` resolved (the claim was lost, or a second interrupt); the
    /// command was stopped.
    Stopped,
    /// The lease's exit deadline passed with no renewal confirmed (this
    /// worker was stopped, starved or cut off from its database), and the
    /// command's guard ended it (SIGTERM, then SIGKILL after the grace)
    /// before another worker could reclaim the job. Told apart from a
    /// command that exited or was killed by the guard's report on the lease
    /// channel.
    Lapsed,
}

/// What a run left behind.
#[derive(Clone, Debug)]
pub struct Run {
    /// How it ended.
    pub ended: Ended,
    /// The last [`OUTPUT_TAIL_BYTES`] of its output.
    pub output: Vec<u8>,
}

/// Appends to a buffer that keeps only its last `OUTPUT_TAIL_BYTES`.
fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    tail.extend_from_slice(chunk);
    if tail.len() > OUTPUT_TAIL_BYTES {
        tail.drain(..tail.len() - OUTPUT_TAIL_BYTES);
    }
}

async fn read_into(mut from: impl AsyncRead + Unpin, to: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        keep_tail(&mut to.lock().unwrap(), &buf[..n]);
    }
}

/// Sends `signal` to the child's process group.
fn signal_group(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

/// Whether any process is left in the child's process group (the child
/// itself reaped). `kill(-pgid, 0)` fails with ESRCH once the group is empty.
fn group_alive(pid: u32) -> bool {
    rustix::process::Pid::from_raw(pid as i32)
        .is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}

/// SIGKILLs the child's process group when dropped armed: a run given up on
/// (the runner drops a perform whose grace has passed) takes its whole group
/// with it, not only the guard that `kill_on_drop` reaches.
struct GroupOnDrop {
    pid: u32,
    armed: bool,
}

impl Drop for GroupOnDrop {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pid, rustix::process::Signal::KILL);
        }
    }
}

/// Resolves once the child's process group is empty, checking every 50 ms.
async fn group_gone(pid: u32) {
    while group_alive(pid) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long output still drains after the command ended: a grandchild that
/// keeps the pipes open must not hold the job.
const DRAIN: Duration = Duration::from_millis(200);

/// How the command ended, if it has (reaped now).
fn exited(child: &mut tokio::process::Child) -> Option<Ended> {
    child.try_wait().ok().flatten().map(|status| Ended::Exited(exit_code(status)))
}

/// Runs `invocation`, stopping it (SIGTERM to its process group, then
/// SIGKILL to the group once `grace` passes with any of it alive) when `stop`
/// resolves (the claim was lost, or the operator asked twice) or `timeout`
/// passes. Processes a command leaves behind in its group when it exits are
/// stopped the same way: nothing of an attempt outlives it. Dropping the
/// future before it resolves SIGKILLs the group at once.
///
/// With a `lease` whose signal has a deadline ([`AbortSignal::deadline`]),
/// the command's guard is given that deadline before it starts and every
/// later one as the lease's renewals move it, so that the guard ends the
/// command by itself when this process cannot (it is stopped, starved, or
/// cut off): [`Ended::Lapsed`].
pub async fn run(
    invocation: &Invocation,
    stop: impl Future<Output = ()>,
    timeout: Option<Duration>,
    grace: Duration,
    lease: Option<&AbortSignal>,
) -> Run {
    let mut seen = lease.and_then(AbortSignal::deadline);
    let (mut channel, theirs) = match seen.map(|_| WorkerEnd::pair()) {
        Some(Ok((ours, theirs))) => (Some(ours), Some(theirs)),
        _ => (None, None),
    };
    if let (Some(channel), Some(at)) = (channel.as_mut(), seen) {
        channel.send(monotonic_ns_of(at.into_std()));
    }
    let mut cmd = invocation.command(theirs.as_ref().map(AsRawFd::as_raw_fd), grace);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
    let spawned = cmd.spawn();
    // Only the guard holds its end now: once this process is gone, the
    // guard reads end-of-file.
    drop(theirs);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Run { ended: Ended::NotStarted(e.to_string()), output: Vec::new() },
    };
    let pid = child.id().unwrap_or(0);
    let mut group = GroupOnDrop { pid, armed: pid != 0 };
    let output = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = [child.stdout.take().map(|s| Box::new(s) as Box<dyn AsyncRead + Unpin + Send>),
                           child.stderr.take().map(|s| Box::new(s) as Box<dyn AsyncRead + Unpin + Send>)]
        .into_iter()
        .flatten()
        .map(|pipe| tokio::spawn(read_into(pipe, output.clone())))
        .collect();
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(stop, deadline);
    let ended = loop {
        tokio::select! {
            // An exit already there wins over a stop or a timeout ready in
            // the same poll (polling the wait reaps the child if it exited):
            // a command that finished just before its lease lapsed has
            // finished, and its outcome is settled (fenced) rather than
            // thrown away and the job run again.
            biased;
            status = child.wait() => break Ended::Exited(status.map_or(-1, exit_code)),
            // The wait above answers only once the runtime has heard of the
            // exit, which after a pause of this process (SIGSTOP, a starved
            // thread) may come after the stop it woke to: asked directly, a
            // command that ended meanwhile has ended, not been stopped.
            () = &mut stop => break exited(&mut child).unwrap_or(Ended::Stopped),
            () = &mut deadline => break exited(&mut child).unwrap_or(Ended::TimedOut),
            moved = moved(lease, seen), if channel.is_some() => {
                seen = moved;
                if let (Some(channel), Some(at)) = (channel.as_mut(), moved) {
                    channel.send(monotonic_ns_of(at.into_std()));
                }
            }
        }
    };
    // Stopped or timed out, or exited leaving processes behind in its group
    // (they belong to this attempt, which is over): the whole group gets its
    // grace, not only the direct child, since a shell that dies on SIGTERM
    // may leave a child that ignores it.
    if matches!(ended, Ended::Stopped | Ended::TimedOut) || group_alive(pid) {
        signal_group(pid, rustix::process::Signal::TERM);
        let _ = tokio::time::timeout(grace, async {
            let _ = child.wait().await;
            group_gone(pid).await;
        })
        .await;
        signal_group(pid, rustix::process::Signal::KILL);
        let _ = child.wait().await;
    }
    // Reaped, with nothing of its group left running (or killed above): the
    // pid may be reused from here on, so it is never signalled again.
    group.armed = false;
    for reader in readers {
        let abort = reader.abort_handle();
        if tokio::time::timeout(DRAIN, reader).await.is_err() {
            abort.abort();
        }
    }
    let mut output = std::mem::take(&mut *output.lock().unwrap());
    let ended = match ended {
        Ended::Exited(_) if channel.as_mut().is_some_and(WorkerEnd::guard_ended_it) => Ended::Lapsed,
        Ended::Exited(code) if code == i32::from(crate::guard::NOT_STARTED_CODE) => match not_started(&output) {
            Some(reason) => {
                output.clear();
                Ended::NotStarted(reason)
            }
            None => ended,
        },
        ended => ended,
    };
    Run { ended, output }
}

/// The lease's next deadline once it moves past `seen`; pending without a
/// lease.
async fn moved(lease: Option<&AbortSignal>, seen: Option<tokio::time::Instant>) -> Option<tokio::time::Instant> {
    match lease {
        Some(signal) => signal.deadline_moved(seen).await,
        None => std::future::pending().await,
    }
}

/// The reason in the guard's "cannot start" line, when that line is the
/// whole output (a command that never started wrote nothing), so a command
/// that prints the marker itself is not taken for one that never started.
fn not_started(output: &[u8]) -> Option<String> {
    let line = std::str::from_utf8(output).ok()?.strip_suffix('\n')?;
    let reason = line.strip_prefix(crate::guard::NOT_STARTED)?;
    (!reason.contains('\n')).then(|| reason.to_owned())
}

/// A status as an exit code: the code, or 128 + signal for a signal death
/// (as shells report it).
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// This binary, to start again as a command's guard, and the name it shows
/// in `ps` (its path). On Linux the program is `/proc/self/exe`, which names
/// the running executable's own file even after an upgrade replaced or
/// removed it at its path: `current_exe` then answers that path with
/// " (deleted)" appended, which starts nothing, and a worker started before
/// the upgrade failed every command it claimed ("could not start …") until
/// each was dead-lettered. Elsewhere, or without a mounted /proc, the path.
fn guard_program() -> std::io::Result<(std::path::PathBuf, std::ffi::OsString)> {
    let path = std::env::current_exe()?;
    let own = std::path::Path::new("/proc/self/exe");
    // In the child that execs it, "self" is the forked worker: the same file.
    let program = if cfg!(target_os = "linux") && own.exists() { own.to_path_buf() } else { path.clone() };
    Ok((program, path.into_os_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_one_byte_short_of_the_kernel_limit_passes_and_one_at_it_is_refused() {
        let fits = "x".repeat(MAX_ARGUMENT_BYTES - 1);
        assert_eq!(check_argument_sizes(&format!("echo {fits}")), Ok(()));
        let at = "x".repeat(MAX_ARGUMENT_BYTES);
        let refused = check_argument_sizes(&format!("echo {at}")).unwrap_err();
        assert!(refused.contains("131071 bytes") && refused.contains("one of its arguments"), "{refused}");
    }

    #[test]
    fn a_shell_line_is_one_argument_as_a_whole() {
        let word = "y".repeat(70 * 1024);
        let line = format!("echo {word} | echo {word}");
        let refused = check_argument_sizes(&line).unwrap_err();
        assert!(refused.contains("the whole line") && refused.contains("sh -c"), "{refused}");
        // The same words without shell syntax are separate arguments.
        assert_eq!(check_argument_sizes(&format!("echo {word} {word}")), Ok(()));
    }

    #[test]
    fn a_plain_line_runs_without_a_shell() {
        assert_eq!(Invocation::parse("  gzip -k  file.txt "), Some(Invocation::Direct(vec!["gzip".into(), "-k".into(), "file.txt".into()])));
    }

    #[test]
    fn a_line_with_shell_syntax_runs_under_sh() {
        for line in ["echo a | wc -c", "cd /tmp && ls", "echo $HOME", "ls *.txt", "A=1 env", "echo 'quoted'", "exit 3", "cd /tmp"] {
            assert_eq!(Invocation::parse(line), Some(Invocation::Shell(line.into())), "{line}");
        }
    }

    #[test]
    fn a_blank_line_is_no_command() {
        assert_eq!(Invocation::parse("   "), None);
    }

    /// Whether process `pid` is gone, waiting up to 2 s for its reaping (an
    /// orphan is reaped by init, not by us).
    async fn gone(pid: i32) -> bool {
        for _ in 0..40 {
            let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
            if rustix::process::test_kill_process(pid).is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    async fn pid_in(file: &std::path::Path) -> i32 {
        for _ in 0..40 {
            if let Ok(text) = std::fs::read_to_string(file) {
                if let Ok(pid) = text.trim().parse() {
                    return pid;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no pid written to {}", file.display());
    }

    #[tokio::test]
    async fn a_timed_out_command_whose_child_ignores_sigterm_is_killed_after_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pid");
        // The outer shell dies on SIGTERM; its child ignores it.
        let line = format!("sh -c 'trap \"\" TERM; echo $$ > {}; sleep 30'; true", file.display());
        let run = run(&Invocation::Shell(line), std::future::pending(), Some(Duration::from_millis(300)), Duration::from_millis(300), None).await;
        assert_eq!(run.ended, Ended::TimedOut);
        assert!(gone(pid_in(&file).await).await, "the child that ignored SIGTERM got SIGKILL");
    }

    /// The command exits and the stop comes while this thread is blocked, so
    /// both are ready at the next poll: the exit is what ended it, every time.
    #[tokio::test(flavor = "current_thread")]
    async fn a_command_that_exited_as_its_stop_came_has_exited() {
        for _ in 0..20 {
            let stop = tokio::time::sleep(Duration::from_millis(50));
            let blocker = tokio::spawn(async { std::thread::sleep(Duration::from_millis(300)) });
            let run = run(&Invocation::Shell("true".into()), stop, None, Duration::from_millis(300), None).await;
            blocker.await.unwrap();
            assert_eq!(run.ended, Ended::Exited(0));
        }
    }

    #[tokio::test]
    async fn what_a_command_leaves_running_in_its_group_is_stopped_when_it_exits() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pid");
        let line = format!("sleep 30 & echo $! > {}", file.display());
        let run = run(&Invocation::Shell(line), std::future::pending(), None, Duration::from_millis(300), None).await;
        assert_eq!(run.ended, Ended::Exited(0));
        assert!(gone(pid_in(&file).await).await, "the background sleep went with its attempt");
    }

    #[test]
    fn only_a_lone_guard_line_means_the_command_never_started() {
        let line = format!("{}No such file or directory (os error 2)\n", crate::guard::NOT_STARTED);
        assert_eq!(not_started(line.as_bytes()).as_deref(), Some("No such file or directory (os error 2)"));
        let spoofed = format!("real output\n{}spoofed\n", crate::guard::NOT_STARTED);
        assert_eq!(not_started(spoofed.as_bytes()), None, "a command that printed output did start");
        assert_eq!(not_started(b"exit 127 from the command\n"), None);
    }

    #[test]
    fn the_output_tail_keeps_the_last_64_kib() {
        let mut tail = Vec::new();
        keep_tail(&mut tail, &vec![b'a'; OUTPUT_TAIL_BYTES]);
        keep_tail(&mut tail, b"end");
        assert_eq!(tail.len(), OUTPUT_TAIL_BYTES);
        assert!(tail.ends_with(b"aend"));
    }
}
