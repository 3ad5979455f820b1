//! The pump's state: kick batching, the dirty set, watermarks and their
//! unsaved moves, failure handling, the compaction schedule, and the backfill
//! after the log was replaced.
// (The reference implementation's `EventPump`.)

use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use super::*;

fn open_pump(sources: &[&str], recorded: &[(&str, u64)]) -> PumpState {
    let mut state = PumpState::new(PumpConfig::default()).unwrap();
    for s in sources {
        state.register(s);
    }
    state.opened(recorded.iter().copied(), false);
    state
}

fn done(state: &mut PumpState) {
    let plan = state.begin_pass();
    drop(plan);
    state.pass_succeeded();
}

#[test]
fn bad_config_is_refused_naming_the_value() {
    let zero_chunk = PumpConfig { chunk_size: 0, ..PumpConfig::default() };
    assert_eq!(PumpState::new(zero_chunk).unwrap_err(), ConfigError::ZeroChunkSize);
    let zero_retry = PumpConfig { retry_after_ms: 0, ..PumpConfig::default() };
    assert_eq!(PumpState::new(zero_retry).unwrap_err(), ConfigError::ZeroRetryDelay);
    assert_eq!(ConfigError::ZeroChunkSize.to_string(), "chunk_size must be at least 1");
    let huge = PumpConfig { chunk_size: MAX_CHUNK_SIZE + 1, ..PumpConfig::default() };
    assert_eq!(PumpState::new(huge).unwrap_err(), ConfigError::ChunkSizeTooLarge(MAX_CHUNK_SIZE + 1));
    assert!(PumpState::new(PumpConfig { chunk_size: MAX_CHUNK_SIZE, ..PumpConfig::default() }).is_ok());
}

#[test]
fn open_keeps_watermarks_of_registered_sources_and_makes_them_dirty() {
    let state = open_pump(&["a", "b"], &[("a", 5), ("gone", 9)]);
    assert_eq!(state.phase(), Phase::Open);
    assert_eq!(state.mark("a"), 5);
    assert_eq!(state.mark("b"), 0);
    assert_eq!(state.mark("gone"), 0, "a source not registered at open was pruned");
    assert_eq!(state.dirty().collect::<Vec<_>>(), vec!["a", "b"]);
    assert!(!state.backfilled());
}

#[test]
fn a_created_log_is_a_backfill() {
    let mut state = PumpState::new(PumpConfig::default()).unwrap();
    state.register("a");
    state.opened(core::iter::empty::<(&str, u64)>(), true);
    assert!(state.backfilled());
}

#[test]
fn kicks_within_the_delay_make_one_pass() {
    let mut state = open_pump(&["a", "b"], &[]);
    done(&mut state);
    state.kick(Some("a"), Millis(1_000));
    state.kick(Some("b"), Millis(1_030));
    assert_eq!(state.poll_timeout(), Some(Millis(1_000 + DEFAULT_KICK_DELAY_MS)));
    assert!(!state.handle_timeout(Millis(1_049)), "not before the delay");
    assert!(state.handle_timeout(Millis(1_050)));
    assert_eq!(state.poll_timeout(), None);
    let plan = state.begin_pass();
    assert_eq!(plan.sources, vec!["a".to_string(), "b".to_string()]);
    assert!(state.dirty().next().is_none());
}

#[test]
fn a_kick_for_an_unknown_source_dirties_nothing() {
    let mut state = open_pump(&["a"], &[]);
    done(&mut state);
    state.kick(Some("stranger"), Millis(0));
    assert!(state.dirty().next().is_none());
    assert!(state.poll_timeout().is_some(), "a pass still runs: the caller asked");
}

#[test]
fn no_pass_before_open_or_after_close() {
    let mut state = PumpState::new(PumpConfig::default()).unwrap();
    state.register("a");
    state.kick(Some("a"), Millis(0));
    assert!(!state.handle_timeout(Millis(100)), "not open yet");
    assert!(state.begin_pass().sources.is_empty());
    state.opened(core::iter::empty::<(&str, u64)>(), false);
    state.closed();
    state.kick(Some("a"), Millis(200));
    assert_eq!(state.poll_timeout(), None, "a closed pump arms no timer");
    assert!(state.begin_pass().sources.is_empty());
}

#[test]
fn a_logged_chunk_moves_its_watermarks_and_clears_unsaved_ones() {
    let mut state = open_pump(&["a", "b"], &[]);
    state.chunk_without_events(&[("b".into(), 4)]);
    assert_eq!(state.mark("b"), 4, "moved in memory");
    let completes = vec![("a".to_string(), 3)];
    assert_eq!(state.to_write(&completes), vec![("a", 3), ("b", 4)], "the unsaved move rides along");
    state.chunk_logged(&completes);
    assert_eq!(state.mark("a"), 3);
    assert!(state.unsaved_marks().is_empty());
}

#[test]
fn close_writes_the_moves_no_append_carried() {
    let mut state = open_pump(&["a"], &[("a", 2)]);
    state.chunk_without_events(&[("a".into(), 9)]);
    assert_eq!(state.unsaved_marks(), vec![("a", 9)]);
    state.unsaved_written();
    assert!(state.unsaved_marks().is_empty(), "an emit's append carried them");
}

#[test]
fn a_failed_pass_keeps_its_sources_dirty_reports_once_and_retries_after_a_second() {
    let mut state = open_pump(&["a", "b"], &[]);
    let plan = state.begin_pass();
    let first = state.pass_failed(plan, "disk full", Millis(10_000));
    assert!(first.report);
    assert_eq!(first.retry_at, Some(Millis(10_000 + RETRY_AFTER_MS)));
    assert_eq!(state.dirty().collect::<Vec<_>>(), vec!["a", "b"]);
    assert_eq!(state.failing(), Some("disk full"));

    assert!(!state.handle_timeout(Millis(10_999)));
    assert!(state.handle_timeout(Millis(11_000)));
    let plan = state.begin_pass();
    let again = state.pass_failed(plan, "disk full", Millis(11_000));
    assert!(!again.report, "the same failure is not reported per retry");
    assert_eq!(again.retry_at, Some(Millis(12_000)));

    let plan = state.begin_pass();
    assert!(state.pass_failed(plan, "read-only file system", Millis(12_000)).report, "a new error is reported");

    state.pass_succeeded();
    assert_eq!(state.failing(), None);
    let plan = state.begin_pass();
    assert!(state.pass_failed(plan, "disk full", Millis(20_000)).report, "a new episode is reported again");
}

#[test]
fn a_failure_with_a_kick_pending_keeps_the_earlier_deadline() {
    let mut state = open_pump(&["a"], &[]);
    let plan = state.begin_pass();
    state.kick(Some("a"), Millis(100));
    let decision = state.pass_failed(plan, "boom", Millis(120));
    assert_eq!(decision.retry_at, Some(Millis(150)));
}

#[test]
fn a_replaced_log_derives_every_source_again() {
    let mut state = open_pump(&["a", "b"], &[("a", 5), ("b", 6)]);
    done(&mut state);
    state.replaced(Millis(500));
    assert_eq!((state.mark("a"), state.mark("b")), (0, 0));
    assert!(state.backfilled());
    assert_eq!(state.dirty().collect::<Vec<_>>(), vec!["a", "b"]);
    assert_eq!(state.poll_timeout(), Some(Millis(550)));
}

#[test]
fn a_forgotten_source_loses_its_watermark_and_dirt() {
    let mut state = open_pump(&["a"], &[("a", 5)]);
    state.forget("a");
    assert_eq!(state.mark("a"), 0);
    assert!(!state.is_registered("a"));
    assert!(state.begin_pass().sources.is_empty());
}

#[test]
fn compaction_runs_at_open_then_at_most_hourly() {
    let mut state = open_pump(&[], &[]);
    assert!(state.compaction_due(Millis(0)), "at open");
    state.compaction_started(Millis(0));
    assert!(!state.compaction_due(Millis(COMPACT_EVERY_MS - 1)));
    assert!(state.compaction_due(Millis(COMPACT_EVERY_MS)));
    state.compaction_started(Millis(COMPACT_EVERY_MS));
    assert!(!state.compaction_due(Millis(COMPACT_EVERY_MS + 10)));
}

#[test]
fn a_flush_derives_every_source_kicked_or_not_and_disarms_the_timer() {
    let mut state = open_pump(&["a", "b"], &[]);
    done(&mut state);
    state.kick(Some("a"), Millis(0));
    state.flush();
    assert_eq!(state.poll_timeout(), None);
    assert_eq!(state.begin_pass().sources, vec!["a".to_string(), "b".to_string()]);
}
