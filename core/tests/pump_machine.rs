//! The pump machine (seed 004 `EventPump`'s order) in virtual time: a host
//! with sources that give a fixed number of drafts per entry and a log in
//! memory that can be told to fail, driving the machine as its module doc
//! says.

use std::collections::BTreeMap;
use std::fmt;

use leasehold_core::Millis;
use leasehold_core::pump::{LogFailure, Op, OpError, Output, Phase, PumpConfig, PumpMachine};

#[derive(Clone, Debug, PartialEq, Eq)]
struct Fail(&'static str);

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl LogFailure for Fail {
    fn replaced_log(&self) -> bool {
        self.0 == "replaced"
    }
}

/// What the host did, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Did {
    Append(Vec<(String, u64)>, Vec<(String, u64)>),
    Settle,
    Logged(Vec<(String, u64)>),
    Compact,
    Verify,
    Forget(String),
    CloseLog,
    Report(String),
}

#[derive(Default)]
struct Host {
    /// Each source's entries: how many drafts each gives (`None`: it fails).
    sources: BTreeMap<String, Vec<Option<usize>>>,
    reading: String,
    /// Drafts derived and not appended yet: (source, entry).
    held: Vec<(String, u64)>,
    /// Appended drafts, durable or in flight.
    log: Vec<(String, u64)>,
    in_flight: Option<Result<(), Fail>>,
    /// The next appends' outcomes (default: success).
    append_fails: Vec<Fail>,
    did: Vec<Did>,
    now: Millis,
}

/// [`pump`], opened on a log without watermarks, with what the opening did taken.
fn opened(config: PumpConfig, sources: &[(&str, Vec<Option<usize>>)]) -> (PumpMachine<Fail>, Host) {
    let (mut m, mut host) = pump(config, sources);
    host.open(&mut m, &[]);
    host.take();
    (m, host)
}

fn pump(config: PumpConfig, sources: &[(&str, Vec<Option<usize>>)]) -> (PumpMachine<Fail>, Host) {
    let mut machine = PumpMachine::new(config).unwrap();
    let mut host = Host::default();
    for (name, entries) in sources {
        machine.register(name);
        host.sources.insert((*name).to_owned(), entries.clone());
    }
    (machine, host)
}

fn s(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    pairs.iter().map(|(n, p)| ((*n).to_owned(), *p)).collect()
}

impl Host {
    /// Runs the machine's outputs until the operation resolves; answers it.
    fn drive(&mut self, m: &mut PumpMachine<Fail>) -> (Op, Result<u64, OpError<Fail>>) {
        loop {
            let output = m.poll_output().expect("the machine waits for nothing the host owes it");
            let now = self.now;
            match output {
                Output::Read { source } => {
                    let len = self.sources.get(&source).map_or(0, |e| e.len() as u64);
                    self.reading = source;
                    m.handle_length(now, Ok(len));
                }
                Output::Derive { index } => match self.sources[&self.reading][index as usize] {
                    Some(n) => {
                        for _ in 0..n {
                            self.held.push((self.reading.clone(), index));
                        }
                        m.handle_derived(now, Ok(n));
                    }
                    None => m.handle_derived(now, Err(Fail("derive failed"))),
                },
                Output::Append { drafts, marks } => {
                    assert!(self.in_flight.is_none(), "one append at a time");
                    let chunk: Vec<_> = self.held.drain(..drafts).collect();
                    let result = if self.append_fails.is_empty() { Ok(()) } else { Err(self.append_fails.remove(0)) };
                    if result.is_ok() {
                        self.log.extend(chunk.iter().cloned());
                    }
                    self.did.push(Did::Append(chunk.iter().map(|(s, i)| (s.clone(), *i)).collect(), marks));
                    self.in_flight = Some(result);
                }
                Output::Settle => {
                    self.did.push(Did::Settle);
                    let result = self.in_flight.take().expect("an append in flight");
                    m.handle_appended(now, result);
                }
                Output::Logged { completes } => self.did.push(Did::Logged(completes)),
                Output::Compact { .. } => {
                    self.did.push(Did::Compact);
                    m.handle_compacted(now, Ok(0));
                }
                Output::Verify => {
                    self.did.push(Did::Verify);
                    m.handle_verified(now, Ok(()));
                }
                Output::Forget { source } => self.did.push(Did::Forget(source)),
                Output::CloseLog => self.did.push(Did::CloseLog),
                Output::Report(text) => self.did.push(Did::Report(text)),
                Output::Resolve { op, result } => {
                    self.held.clear();
                    return (op, result);
                }
            }
        }
    }

    fn open(&mut self, m: &mut PumpMachine<Fail>, marks: &[(&str, u64)]) {
        m.handle_opened(self.now, marks.iter().copied(), false);
        assert_eq!(self.drive(m), (Op::Open, Ok(0)));
    }

    fn take(&mut self) -> Vec<Did> {
        std::mem::take(&mut self.did)
    }
}

fn config(chunk_size: usize) -> PumpConfig {
    PumpConfig { chunk_size, ..PumpConfig::default() }
}

#[test]
fn open_compacts_then_derives_every_source_past_its_watermark_in_chunks() {
    let (mut m, mut host) = pump(config(2), &[("a", vec![Some(1); 3]), ("b", vec![Some(1); 2])]);
    host.open(&mut m, &[("a", 1)]);
    assert_eq!(
        host.take(),
        vec![
            Did::Compact,
            // a's entries 1 and 2 fill the first chunk, which completes a.
            Did::Append(s(&[("a", 1), ("a", 2)]), s(&[("a", 3)])),
            // The next chunk waits for the first to be durable.
            Did::Settle,
            Did::Logged(s(&[("a", 3)])),
            Did::Append(s(&[("b", 0), ("b", 1)]), s(&[("b", 2)])),
            Did::Settle,
            Did::Logged(s(&[("b", 2)])),
        ],
    );
    assert_eq!(m.state().mark("b"), 2);
    // Every watermark moved with its append: close has none left to record
    // (no watermark-only append before its check).
    m.handle_close(host.now);
    assert_eq!(host.drive(&mut m), (Op::Close, Ok(0)));
    assert_eq!(host.take(), vec![Did::Verify, Did::CloseLog]);
}

#[test]
fn an_entry_with_more_drafts_than_a_chunk_is_cut_and_its_watermark_waits_for_its_last_chunk() {
    let (mut m, mut host) = pump(config(2), &[("a", vec![Some(5)])]);
    host.open(&mut m, &[]);
    let appends: Vec<_> = host.take().into_iter().filter(|d| matches!(d, Did::Append(..))).collect();
    assert_eq!(appends.len(), 3);
    assert_eq!(appends[2], Did::Append(s(&[("a", 0)]), s(&[("a", 1)])));
    assert_eq!(host.log.len(), 5);
}

#[test]
fn a_failed_append_keeps_the_sources_dirty_reports_once_and_retries_after_the_delay() {
    let (mut m, mut host) = pump(config(10), &[("a", vec![Some(1); 3])]);
    host.append_fails = vec![Fail("disk full"), Fail("disk full")];
    host.open(&mut m, &[]);
    let did = host.take();
    assert!(did.contains(&Did::Report("event log append failed (retrying in the background): disk full".into())), "{did:?}");
    assert_eq!(m.state().failing(), Some("disk full"));
    assert_eq!(m.state().mark("a"), 0);
    assert_eq!(m.state().dirty().collect::<Vec<_>>(), ["a"]);
    let retry = m.poll_timeout().expect("a retry is armed");
    assert_eq!(retry, Millis(1_000));
    // Early: nothing runs.
    m.handle_timeout(Millis(999));
    assert_eq!(m.poll_output(), None);
    host.now = retry;
    m.handle_timeout(retry);
    assert_eq!(host.drive(&mut m), (Op::Timer, Ok(0)));
    assert!(!host.take().iter().any(|d| matches!(d, Did::Report(_))), "the same failure is reported once");
    host.now = Millis(2_000);
    m.handle_timeout(Millis(2_000));
    assert_eq!(host.drive(&mut m), (Op::Timer, Ok(0)));
    assert_eq!(m.state().mark("a"), 3);
    assert_eq!(m.state().failing(), None);
    assert_eq!(host.log.len(), 3);
}

#[test]
fn flush_rejects_with_the_append_failure_and_checks_the_file_when_it_succeeds() {
    let (mut m, mut host) = opened(config(10), &[("a", vec![])]);
    host.sources.insert("a".into(), vec![Some(1)]);
    host.append_fails = vec![Fail("gone")];
    m.handle_flush(host.now);
    assert_eq!(host.drive(&mut m), (Op::Flush, Err(OpError::Failed(Fail("gone")))));
    m.handle_flush(host.now);
    assert_eq!(host.drive(&mut m), (Op::Flush, Ok(0)));
    assert_eq!(host.take().last(), Some(&Did::Verify));
}

#[test]
fn a_source_that_fails_stops_before_the_entry_and_the_others_are_logged() {
    let (mut m, mut host) = pump(config(10), &[("a", vec![Some(1), None, Some(1)]), ("b", vec![Some(1)])]);
    host.open(&mut m, &[]);
    m.handle_flush(host.now);
    assert_eq!(host.drive(&mut m), (Op::Flush, Err(OpError::Failed(Fail("derive failed")))));
    assert_eq!(m.state().mark("a"), 1);
    assert_eq!(m.state().mark("b"), 1);
}

#[test]
fn kicks_within_the_delay_make_one_pass_when_the_timer_passes() {
    let (mut m, mut host) = opened(config(10), &[("a", vec![])]);
    host.sources.insert("a".into(), vec![Some(1), Some(1)]);
    m.handle_kick(Millis(10), Some("a"));
    m.handle_kick(Millis(30), Some("a"));
    assert_eq!(m.poll_timeout(), Some(Millis(60)));
    host.now = Millis(60);
    m.handle_timeout(Millis(60));
    assert_eq!(host.drive(&mut m), (Op::Timer, Ok(0)));
    assert_eq!(host.take().iter().filter(|d| matches!(d, Did::Append(..))).count(), 1);
    assert_eq!(m.poll_timeout(), None);
}

#[test]
fn emit_appends_in_chunks_carrying_the_watermarks_moved_without_an_append() {
    let (mut m, mut host) = opened(config(2), &[("a", vec![Some(0)])]);
    assert_eq!(m.state().mark("a"), 1);
    host.held = vec![("x".into(), 0); 3];
    m.handle_emit(host.now, 3);
    assert_eq!(host.drive(&mut m), (Op::Emit, Ok(0)));
    let appends: Vec<_> = host.take().into_iter().filter(|d| matches!(d, Did::Append(..))).collect();
    assert_eq!(appends, [Did::Append(s(&[("x", 0); 2]), s(&[("a", 1)])), Did::Append(s(&[("x", 0)]), vec![])]);
}

#[test]
fn close_derives_what_is_left_records_moved_watermarks_checks_and_closes() {
    let (mut m, mut host) = opened(config(10), &[("a", vec![])]);
    host.sources.insert("a".into(), vec![Some(0), Some(0)]);
    m.handle_close(host.now);
    assert_eq!(host.drive(&mut m), (Op::Close, Ok(0)));
    assert_eq!(
        host.take(),
        vec![Did::Append(vec![], s(&[("a", 2)])), Did::Settle, Did::Verify, Did::CloseLog]
    );
    assert_eq!(m.state().phase(), Phase::Closed);
    m.handle_close(host.now);
    assert_eq!(host.drive(&mut m), (Op::Close, Ok(0)));
    m.handle_flush(host.now);
    assert_eq!(host.drive(&mut m), (Op::Flush, Err(OpError::NotOpen(Phase::Closed))));
}

#[test]
fn close_closes_the_log_even_when_its_pass_failed_and_reports_it() {
    let (mut m, mut host) = pump(config(10), &[("a", vec![Some(1)])]);
    host.append_fails = vec![Fail("eio"), Fail("eio")];
    host.open(&mut m, &[]);
    host.take();
    m.handle_close(host.now);
    assert_eq!(host.drive(&mut m), (Op::Close, Err(OpError::Failed(Fail("eio")))));
    let did = host.take();
    assert!(did.ends_with(&[Did::CloseLog, Did::Report("event log close failed: eio".into())]), "{did:?}");
    assert_eq!(m.poll_timeout(), None, "no retry after close");
}

#[test]
fn remove_logs_what_is_left_then_forgets_the_source() {
    let (mut m, mut host) = opened(config(10), &[("a", vec![]), ("b", vec![])]);
    host.sources.insert("a".into(), vec![Some(1)]);
    m.handle_remove(host.now, "a");
    assert_eq!(host.drive(&mut m), (Op::Remove, Ok(0)));
    assert!(host.take().ends_with(&[Did::Forget("a".into())]));
    assert!(!m.state().is_registered("a"));
    assert_eq!(host.log, s(&[("a", 0)]));
}

#[test]
fn an_operation_started_while_another_runs_is_refused_as_busy() {
    let (mut m, mut host) = pump(config(10), &[("a", vec![Some(1)])]);
    m.handle_opened(host.now, std::iter::empty::<(&str, u64)>(), false);
    m.handle_flush(host.now);
    assert_eq!(host.drive(&mut m), (Op::Flush, Err(OpError::Busy)));
    assert_eq!(host.drive(&mut m), (Op::Open, Ok(0)));
    assert_eq!(host.log, s(&[("a", 0)]));
}

#[test]
fn a_log_created_anew_behind_an_append_derives_every_source_again() {
    let (mut m, mut host) = pump(config(10), &[("a", vec![Some(1); 2])]);
    host.open(&mut m, &[]);
    assert_eq!(m.state().mark("a"), 2);
    host.sources.get_mut("a").unwrap().push(Some(1));
    host.append_fails = vec![Fail("replaced")];
    m.handle_flush(host.now);
    assert_eq!(host.drive(&mut m), (Op::Flush, Err(OpError::Failed(Fail("replaced")))));
    assert!(m.state().backfilled());
    host.now = m.poll_timeout().unwrap();
    m.handle_timeout(host.now);
    assert_eq!(host.drive(&mut m), (Op::Timer, Ok(0)));
    assert_eq!(host.log, s(&[("a", 0), ("a", 1), ("a", 0), ("a", 1), ("a", 2)]));
}

#[test]
fn a_pass_compacts_when_the_hour_since_the_last_compaction_passed() {
    let (mut m, mut host) = opened(config(10), &[("a", vec![])]);
    host.now = Millis(3_600_000);
    m.handle_kick(host.now, Some("a"));
    host.now = m.poll_timeout().unwrap();
    m.handle_timeout(host.now);
    assert_eq!(host.drive(&mut m), (Op::Timer, Ok(0)));
    assert_eq!(host.take(), vec![Did::Compact]);
}

#[test]
fn a_source_read_behind_its_watermark_is_said_once_until_it_catches_up() {
    // A journal replaced or cut back derives nothing below its watermark: said, not silent.
    let (mut m, mut host) = opened(config(10), &[("a", vec![Some(1); 5])]);
    let flush = |m: &mut PumpMachine<Fail>, host: &mut Host| {
        m.handle_flush(host.now);
        assert_eq!(host.drive(m), (Op::Flush, Ok(0)));
        host.take().into_iter().filter(|d| matches!(d, Did::Report(_) | Did::Append(..))).collect::<Vec<_>>()
    };
    host.sources.insert("a".into(), vec![Some(1); 2]);
    let said = "event source 'a' holds 2 committed entries, fewer than its watermark 5: its entries are derived \
                again only from 5 on (was its journal replaced or cut back? remove the source and add it again \
                to derive it from its first entry)";
    assert_eq!(flush(&mut m, &mut host), vec![Did::Report(said.into())]);
    assert_eq!(flush(&mut m, &mut host), vec![], "said once while it stays behind");
    host.sources.insert("a".into(), vec![Some(1); 6]);
    assert_eq!(flush(&mut m, &mut host), vec![Did::Append(s(&[("a", 5)]), s(&[("a", 6)]))], "past it, it derives on");
    host.sources.insert("a".into(), vec![Some(1); 1]);
    let again = flush(&mut m, &mut host);
    assert_eq!(again.len(), 1, "behind again after catching up: said again");
    assert!(matches!(&again[0], Did::Report(text) if text.contains("holds 1 committed entries, fewer than its watermark 6")));
    // Removed and added again, it derives from its first entry, and nothing is said.
    m.handle_remove(host.now, "a");
    assert_eq!(host.drive(&mut m), (Op::Remove, Ok(0)));
    host.take();
    m.handle_add_source(host.now, "a").unwrap();
    assert_eq!(flush(&mut m, &mut host), vec![Did::Append(s(&[("a", 0)]), s(&[("a", 1)]))]);
}
