//! The trace of one simulation: every step, hashed as it happens (the
//! determinism check compares hashes), and kept in full only when asked for
//! (a replay).

use core::fmt;

/// What happened.
#[allow(missing_docs)] // the names say it; `a`/`b` per kind are in `TraceLine`'s Display
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum What {
    Enqueue,
    Wake,
    ClaimSent,
    ClaimLanded,
    ClaimEmpty,
    ClaimFailed,
    ClaimHeard,
    ClaimDeclined,
    DeadLettered,
    Perform,
    WorkDone,
    RenewSent,
    RenewLanded,
    RenewHeard,
    SettleSent,
    SettleLanded,
    SettleHeard,
    ReleaseSent,
    ReleaseLanded,
    Abort,
    ItemSettled,
    Crash,
    Restart,
    PauseStart,
    PauseEnd,
    ThrottleStart,
    ThrottleEnd,
    PartitionStart,
    PartitionEnd,
    ClockSet,
    Calm,
    ProbeEnqueue,
    ProbeCrash,
    GuardStop,
    Cancel,
    Retry,
    WallStep,
    ClockAnchored,
}

/// One step. `worker` is 255 for store-wide steps; `a` and `b` depend on
/// the kind (tokens, stamps, answers, durations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceLine {
    /// Simulated real time, ms.
    pub time: u64,
    /// What happened.
    pub what: What,
    /// Which worker (255: none).
    pub worker: u8,
    /// Which item (`u32::MAX`: none).
    pub item: u32,
    /// First detail.
    pub a: u64,
    /// Second detail.
    pub b: u64,
}

impl fmt::Display for TraceLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={:>8}  ", self.time)?;
        if self.worker == 255 {
            write!(f, "store ")?;
        } else {
            write!(f, "w{:<4} ", self.worker)?;
        }
        let (a, b) = (self.a, self.b);
        let item = self.item;
        match self.what {
            What::Enqueue => write!(f, "enqueue item {item}"),
            What::Wake => write!(f, "wake"),
            What::ClaimSent => write!(f, "claim sent at={a}"),
            What::ClaimLanded => write!(f, "claim landed: item {item} token {a} (evidence {})", evidence_name(b)),
            What::ClaimEmpty => write!(f, "claim landed: nothing"),
            What::ClaimFailed => write!(f, "claim failed"),
            What::ClaimHeard => write!(f, "claim heard: item {item} token {a}, believes it owns it"),
            What::ClaimDeclined => write!(f, "claim heard {b}ms after its at: item {item} token {a} declined, not performed"),
            What::DeadLettered => write!(f, "item {item} dead-lettered after {a} attempts"),
            What::Perform => write!(f, "perform item {item} token {a} for {b}ms"),
            What::WorkDone => write!(f, "work done item {item} token {a} (fails: {})", b == 1),
            What::RenewSent => write!(f, "renew sent item {item} token {a} at={b}"),
            What::RenewLanded => write!(f, "renew item {item} token {a}: {}", answer_name(b)),
            What::RenewHeard => write!(f, "renew heard item {item} token {a}: {}", answer_name(b)),
            What::SettleSent => write!(f, "settle sent item {item} token {a}"),
            What::SettleLanded => write!(f, "settle item {item} token {a}: {}", answer_name(b)),
            What::SettleHeard => write!(f, "settle heard item {item} token {a}: {}", answer_name(b)),
            What::ReleaseSent => write!(f, "release sent item {item} token {a}"),
            What::ReleaseLanded => write!(f, "release item {item} token {a}: {}", answer_name(b)),
            What::Abort => write!(f, "abort item {item} token {a} ({})", if b == 1 { "lapsed" } else { "lost" }),
            What::ItemSettled => write!(f, "runner settled item {item} token {a} ({})", if b == 1 { "ok" } else { "raised" }),
            What::Crash => write!(f, "crash (pid {a})"),
            What::Restart => write!(f, "restart as pid {a} nonce {b}"),
            What::PauseStart => write!(f, "pause for {a}ms"),
            What::PauseEnd => write!(f, "pause ends"),
            What::ThrottleStart => write!(f, "throttled for {a}ms, timers every {b}ms"),
            What::ThrottleEnd => write!(f, "throttle ends"),
            What::PartitionStart => write!(f, "cut off from the store for {a}ms ({})", if b == 1 { "calls hang" } else { "calls fail" }),
            What::PartitionEnd => write!(f, "partition ends"),
            What::ClockSet => write!(f, "clock offset {a} -> {b}ms"),
            What::Calm => write!(f, "faults stop"),
            What::ProbeEnqueue => write!(f, "reclaim probe: enqueue item {item}"),
            What::ProbeCrash => write!(f, "reclaim probe: crash the owner of item {item}, bound t={a}"),
            What::GuardStop => write!(f, "guard: exit deadline passed unmoved, stops item {item} token {a}, ends in {b}ms"),
            What::Cancel => match b {
                0 => write!(f, "operator: cancel item {item} (pending), token now {a}"),
                running => write!(f, "operator: cancel item {item} running under token {running}, token now {a}"),
            },
            What::Retry => write!(f, "operator: retry item {item}, due t={a}"),
            What::WallStep => write!(f, "host {a}'s wall clock steps to {:+}ms off real time", b as i64),
            What::ClockAnchored => write!(f, "its clock starts {:+}ms off real time beyond the band (its host's wall clock)", a as i64),
        }
    }
}

fn answer_name(code: u64) -> &'static str {
    match code {
        1 => "true",
        0 => "false",
        _ => "error",
    }
}

fn evidence_name(code: u64) -> &'static str {
    match code {
        1 => "lease-expired",
        2 => "same-host-pid-dead",
        _ => "none: pending",
    }
}

/// The running hash (FNV-1a over 64-bit words) and, when recording, every
/// line.
#[derive(Clone, Debug)]
pub struct Trace {
    hash: u64,
    lines: Option<Vec<TraceLine>>,
    /// Steps so far.
    pub steps: u64,
}

impl Trace {
    /// An empty trace; `record` keeps every line.
    pub fn new(record: bool) -> Trace {
        Trace { hash: 0xcbf2_9ce4_8422_2325, lines: record.then(Vec::new), steps: 0 }
    }

    /// Adds a step.
    pub fn push(&mut self, line: TraceLine) {
        let words = [line.time, line.what as u64 | u64::from(line.worker) << 8 | u64::from(line.item) << 16, line.a, line.b];
        for word in words {
            self.hash = (self.hash ^ word).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.steps += 1;
        if let Some(lines) = &mut self.lines {
            lines.push(line);
        }
    }

    /// The hash of every step so far.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The recorded lines (empty unless recording).
    pub fn into_lines(self) -> Vec<TraceLine> {
        self.lines.unwrap_or_default()
    }
}
