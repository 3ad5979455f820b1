//! Retention (the reference implementation's compaction window): a
//! compaction drops only old records of quiet or gone sources, asking each
//! source once.

use leasehold_core::Millis;
use leasehold_core::pump::Retention;

#[test]
fn retention_drops_only_old_records_of_quiet_or_gone_sources() {
    let mut retention = Retention::new(Millis(100_000), 10_000);
    assert_eq!(retention.cutoff(), Millis(90_000));
    let verdict = |source: &str| source != "busy";
    assert!(retention.drops("idle", Millis(89_999), verdict));
    assert!(!retention.drops("idle", Millis(90_000), verdict), "not older than the window");
    assert!(!retention.drops("busy", Millis(1), verdict), "a source that is not quiet keeps everything");
}

#[test]
fn retention_asks_each_source_once() {
    let mut retention = Retention::new(Millis(100), 10);
    let mut asked = Vec::new();
    for at in [1, 2, 3] {
        retention.drops("a", Millis(at), |s| {
            asked.push(s.to_string());
            true
        });
    }
    retention.drops("a", Millis(99), |_| unreachable!("recent records never ask"));
    assert_eq!(asked, vec!["a"]);
}
