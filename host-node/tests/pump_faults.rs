//! A failing append or fsync injected at each chunk of a pass (seed 004: "a
//! pass that cannot log what it derived retries"): watermarks on disk are
//! never ahead of the records on disk, and after recovery every derived event
//! is present at least once with the watermark at the end.

mod eventlog_support;

use eventlog_support::{Fault, FaultyStorage, Journal, clock_at, contents, open_pump, pump_options, temp_log};

const A_LEN: u64 = 30;
const B_LEN: u64 = 17;
const CHUNK: usize = 4;

/// Appends one pass of journals of `a_len` and `b_len` entries takes without
/// faults.
async fn appends_per_pass(chunk: usize, a_len: u64, b_len: u64) -> usize {
    let (_dir, path) = temp_log();
    let storage = FaultyStorage::new();
    let (a, b) = (Journal::new(0), Journal::new(0));
    let pump = open_pump(pump_options(&path, chunk, &storage, &clock_at(0)), &[("a", &a), ("b", &b)]).await;
    a.grow(a_len);
    b.grow(b_len);
    storage.heal();
    pump.flush().await.unwrap();
    storage.appends()
}

#[tokio::test]
async fn a_failure_at_each_chunk_never_leaves_watermarks_ahead_and_recovers_completely() {
    fails_at_each_chunk(CHUNK, A_LEN, B_LEN).await;
}

/// Larger chunks (each serialised draft by draft while the one before it is
/// appended) cut entries elsewhere: the same guarantees hold.
#[tokio::test]
async fn the_same_holds_with_chunks_of_64() {
    fails_at_each_chunk(64, 300, 180).await;
}

async fn fails_at_each_chunk(chunk: usize, a_len: u64, b_len: u64) {
    let chunks = appends_per_pass(chunk, a_len, b_len).await;
    assert!(chunks >= 10, "the pass is cut into many chunks ({chunks})");
    for fault in [Fault::WriteNothing, Fault::WritePartial(9), Fault::SyncFails] {
        for k in 0..chunks {
            for restart in [false, true] {
                let case = format!("{fault:?} at chunk {k}, restart {restart}");
                let (_dir, path) = temp_log();
                let storage = FaultyStorage::new();
                let (a, b) = (Journal::new(0), Journal::new(0));
                let options = pump_options(&path, chunk, &storage, &clock_at(0));
                let pump = open_pump(options.clone(), &[("a", &a), ("b", &b)]).await;
                a.grow(a_len);
                b.grow(b_len);
                storage.fail_append(k, fault);
                let err = pump.flush().await.expect_err(&case);
                assert!(err.to_string().contains("injected"), "{case}: {err}");

                let on_disk = contents(&path);
                on_disk.assert_marks_not_ahead("a");
                on_disk.assert_marks_not_ahead("b");

                storage.heal();
                let pump = if restart {
                    drop(pump);
                    open_pump(options, &[("a", &a), ("b", &b)]).await
                } else {
                    pump.flush().await.unwrap_or_else(|e| panic!("{case}: {e}"));
                    pump
                };
                pump.close().await.unwrap_or_else(|e| panic!("{case}: {e}"));
                let after = contents(&path);
                after.assert_complete("a", a_len);
                after.assert_complete("b", b_len);
            }
        }
    }
}

#[tokio::test]
async fn a_failed_chunk_rederives_only_the_rest() {
    let (_dir, path) = temp_log();
    let storage = FaultyStorage::new();
    let a = Journal::new(0);
    let pump = open_pump(pump_options(&path, CHUNK, &storage, &clock_at(0)), &[("a", &a)]).await;
    a.grow(A_LEN);
    storage.fail_append(3, Fault::WriteNothing);
    pump.flush().await.unwrap_err();
    let logged_before = contents(&path).count("a");
    assert_eq!(logged_before, 3 * CHUNK, "three whole chunks landed");
    storage.heal();
    pump.flush().await.unwrap();
    let after = contents(&path);
    // Chunk 3 started inside an entry at most: only that entry's drafts
    // already logged can be logged twice.
    assert!(after.count("a") <= eventlog_support::total_drafts(A_LEN) + CHUNK, "{} events", after.count("a"));
    after.assert_marks_not_ahead("a");
}
