//! One watermark per source: how far the pump derived it.
//!
//! A watermark is a position in a source's committed entries: every entry
//! before it was derived and its events are in the log (or it derived none).
//! A watermark moves when the chunk that completes it is logged; a chunk that
//! carries no events moves it in memory only, and the move is written with the
//! next append (or at close). That is why the two sets below exist: what is
//! true of the log, and which of it the log does not say yet.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;

/// The pump's watermarks and which of them the log has not recorded yet.
/// Hosts read them ([`Watermarks::iter`], through
/// [`PumpMachine::state`](super::PumpMachine::state)); only the pump moves them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Watermarks {
    marks: BTreeMap<String, u64>,
    unsaved: BTreeSet<String>,
}

impl Watermarks {
    /// No watermarks: every source derives from its first entry.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The watermarks a log recorded at open, keeping only the sources `keep`
    /// accepts.
    pub(crate) fn load<S: AsRef<str>>(
        recorded: impl IntoIterator<Item = (S, u64)>,
        mut keep: impl FnMut(&str) -> bool,
    ) -> Self {
        let marks = recorded
            .into_iter()
            .filter(|(name, _)| keep(name.as_ref()))
            .map(|(name, position)| (String::from(name.as_ref()), position))
            .collect();
        Watermarks { marks, unsaved: BTreeSet::new() }
    }

    /// Where `source` derives from next (0 when it has no watermark).
    pub(crate) fn get(&self, source: &str) -> u64 {
        self.marks.get(source).copied().unwrap_or(0)
    }

    /// Every watermark, by source name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.marks.iter().map(|(name, position)| (name.as_str(), *position))
    }

    /// Whether some watermark moved that the log does not record yet.
    pub(crate) fn has_unsaved(&self) -> bool {
        !self.unsaved.is_empty()
    }

    /// The watermarks an append should carry: the moves not recorded yet plus
    /// the ones the chunk completes (`completes` wins for a source in both).
    pub(crate) fn to_write<'a>(&'a self, completes: &'a [(String, u64)]) -> Vec<(&'a str, u64)> {
        let mut out: BTreeMap<&str, u64> = self
            .unsaved
            .iter()
            .filter_map(|name| self.marks.get(name).map(|p| (name.as_str(), *p)))
            .collect();
        for (name, position) in completes {
            out.insert(name.as_str(), *position);
        }
        out.into_iter().collect()
    }

    /// An append that carried [`Watermarks::to_write`] for `completes` is
    /// durable: those watermarks move and nothing is unsaved any more.
    pub(crate) fn logged(&mut self, completes: &[(String, u64)]) {
        self.unsaved.clear();
        for (name, position) in completes {
            self.advance(name, *position);
        }
    }

    /// A chunk without events completed `completes`: the watermarks move in
    /// memory and wait for the next append (or close) to be recorded.
    pub(crate) fn moved_unlogged(&mut self, completes: &[(String, u64)]) {
        for (name, position) in completes {
            if self.advance(name, *position) {
                self.unsaved.insert(name.clone());
            }
        }
    }

    /// An append with no watermark of its own (an emit) carried the unsaved
    /// ones: nothing is unsaved any more.
    pub(crate) fn unsaved_logged(&mut self) {
        self.unsaved.clear();
    }

    /// Moves `source` forward to `position`; a watermark never moves back.
    /// Answers whether it moved.
    fn advance(&mut self, source: &str, position: u64) -> bool {
        match self.marks.get_mut(source) {
            Some(current) if *current >= position => false,
            Some(current) => {
                *current = position;
                true
            }
            None => {
                self.marks.insert(String::from(source), position);
                true
            }
        }
    }

    /// The source is gone (its journal was dropped): its watermark goes.
    pub(crate) fn forget(&mut self, source: &str) {
        self.marks.remove(source);
        self.unsaved.remove(source);
    }

    /// The log was replaced by a new, empty one: every source derives again
    /// from its first entry (backfill).
    pub(crate) fn clear(&mut self) {
        self.marks.clear();
        self.unsaved.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermarks_never_move_back() {
        let mut marks = Watermarks::new();
        marks.logged(&[(String::from("a"), 10)]);
        marks.logged(&[(String::from("a"), 4)]);
        assert_eq!(marks.get("a"), 10);
        marks.moved_unlogged(&[(String::from("a"), 7)]);
        assert!(!marks.has_unsaved(), "a move back is no move");
    }
}
