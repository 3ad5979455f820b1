//! Chunk planning: at most N drafts per append, each carrying the watermarks
//! it completes; a source cut inside a chunk gets the position up to which its
//! events are in it.
// (The reference implementation's `EventPump.pass`.)

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{Chunk, Chunker};

/// Drives a chunker over sources given as `(name, from, drafts per entry)`,
/// collecting every chunk it cuts (the last one included).
fn plan(max: usize, sources: &[(&str, u64, &[usize])]) -> Vec<Chunk<(String, u64, usize)>> {
    let mut chunker = Chunker::new(max);
    let mut out = Vec::new();
    for (name, from, per_entry) in sources {
        chunker.begin_source(name, *from);
        for (offset, count) in per_entry.iter().enumerate() {
            let index = from + offset as u64;
            for j in 0..*count {
                if let Some(chunk) = chunker.push(index, (String::from(*name), index, j)) {
                    out.push(chunk);
                }
            }
        }
        chunker.end_source(from + per_entry.len() as u64);
    }
    out.extend(chunker.finish());
    out
}

fn marks(chunk: &Chunk<(String, u64, usize)>) -> Vec<(&str, u64)> {
    chunk.completes.iter().map(|(s, p)| (s.as_str(), *p)).collect()
}

#[test]
fn a_pass_that_fits_is_one_chunk_completing_every_source() {
    let chunks = plan(10, &[("a", 0, &[1, 2]), ("b", 5, &[1])]);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].drafts.len(), 4);
    assert_eq!(marks(&chunks[0]), vec![("a", 2), ("b", 6)]);
}

#[test]
fn no_chunk_holds_more_than_the_maximum() {
    let chunks = plan(4, &[("a", 0, &[3, 3, 3, 3]), ("b", 0, &[5])]);
    assert!(chunks.iter().all(|c| c.drafts.len() <= 4), "{chunks:?}");
    let total: usize = chunks.iter().map(|c| c.drafts.len()).sum();
    assert_eq!(total, 17);
}

#[test]
fn a_source_cut_inside_a_chunk_gets_the_position_its_events_reach() {
    // Entries of 3 drafts, chunks of 4: entry 1's drafts straddle chunks 1 and 2.
    let chunks = plan(4, &[("a", 10, &[3, 3, 3])]);
    assert_eq!(chunks.len(), 3);
    // Chunk 1: entry 10 (3) + first of 11: only entry 10 is complete.
    assert_eq!(marks(&chunks[0]), vec![("a", 11)]);
    // Chunk 2: rest of 11 (2) + first two of 12: 11 is complete.
    assert_eq!(marks(&chunks[1]), vec![("a", 12)]);
    // Chunk 3: last of 12; the source ends at 13.
    assert_eq!(marks(&chunks[2]), vec![("a", 13)]);
}

#[test]
fn an_entry_larger_than_a_chunk_is_split_and_its_watermark_waits_for_its_last_draft() {
    let chunks = plan(2, &[("a", 0, &[5])]);
    assert_eq!(chunks.iter().map(|c| c.drafts.len()).collect::<Vec<_>>(), vec![2, 2, 1]);
    assert!(marks(&chunks[0]).is_empty(), "entry 0 is not complete after its first two drafts");
    assert!(marks(&chunks[1]).is_empty());
    assert_eq!(marks(&chunks[2]), vec![("a", 1)]);
}

#[test]
fn a_source_completed_just_before_a_cut_travels_with_that_chunk() {
    // "a" fills the chunk exactly; "b" starts the next one.
    let chunks = plan(2, &[("a", 0, &[2]), ("b", 0, &[1])]);
    assert_eq!(chunks.len(), 2);
    assert_eq!(marks(&chunks[0]), vec![("a", 1)]);
    assert_eq!(marks(&chunks[1]), vec![("b", 1)]);
}

#[test]
fn entries_without_drafts_still_move_the_watermark() {
    let chunks = plan(4, &[("quiet", 3, &[0, 0, 0])]);
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].drafts.is_empty());
    assert_eq!(marks(&chunks[0]), vec![("quiet", 6)]);
}

#[test]
fn a_pass_with_nothing_to_derive_cuts_no_chunk() {
    let mut chunker: Chunker<u8> = Chunker::new(4);
    chunker.begin_source("a", 7);
    chunker.end_source(7);
    assert!(chunker.finish().is_none());
}

#[test]
fn a_zero_maximum_is_one() {
    let chunker: Chunker<u8> = Chunker::new(0);
    assert_eq!(chunker.max, 1);
}
