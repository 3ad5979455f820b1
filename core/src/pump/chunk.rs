//! Chunk planning for a derivation pass.
//!
//! A pass appends in chunks of at most `max` drafts so memory stays bounded
//! and a failure re-derives only the rest. Each chunk carries the watermarks
//! it completes: a source whose entries all fit in the chunk gets its
//! committed length; a source cut inside the chunk gets the position up to
//! which its events are in it (the entry whose drafts were being added when the
//! chunk filled is not complete, so its own index is the watermark and a
//! failure re-derives it whole: at least once).

use alloc::string::String;
use alloc::vec::Vec;
use core::mem;

/// One append: at most `max` drafts and the watermarks they complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chunk<D> {
    /// The drafts, in derivation order.
    pub(crate) drafts: Vec<D>,
    /// `(source, position)`: every entry of `source` before `position` has
    /// its events in this chunk or an earlier one.
    pub(crate) completes: Vec<(String, u64)>,
}

impl<D> Chunk<D> {
    /// Whether the chunk carries neither drafts nor watermarks.
    pub(crate) fn is_empty(&self) -> bool {
        self.drafts.is_empty() && self.completes.is_empty()
    }
}

/// The source a pass is deriving: its name and the position up to which its
/// events are already in a chunk.
#[derive(Debug)]
struct Cursor {
    source: String,
    done: u64,
}

/// Cuts a pass's drafts into chunks.
///
/// Drive it per source: [`Chunker::begin_source`] with the source's
/// watermark, [`Chunker::push`] for each draft of each entry in order (append
/// the chunk it returns before going on), [`Chunker::end_source`] with the
/// committed length read; then [`Chunker::finish`] for the last chunk.
#[derive(Debug)]
pub(crate) struct Chunker<D> {
    max: usize,
    drafts: Vec<D>,
    completes: Vec<(String, u64)>,
    current: Option<Cursor>,
}

impl<D> Chunker<D> {
    /// A chunker cutting at `max` drafts (at least 1: a smaller value is 1).
    pub(crate) fn new(max: usize) -> Self {
        Chunker { max: max.max(1), drafts: Vec::new(), completes: Vec::new(), current: None }
    }

    /// Starts deriving `source` from its watermark `from`.
    pub(crate) fn begin_source(&mut self, source: &str, from: u64) {
        self.current = Some(Cursor { source: String::from(source), done: from });
    }

    /// Adds a draft of entry `index` of the current source. When the chunk is
    /// already full it is cut first and returned: append it (with
    /// [`Chunk::completes`]) before pushing more. Indices must not go back.
    pub(crate) fn push(&mut self, index: u64, draft: D) -> Option<Chunk<D>> {
        let cut = if self.drafts.len() >= self.max {
            if let Some(cursor) = self.current.as_mut() {
                if index > cursor.done {
                    cursor.done = index;
                    self.completes.push((cursor.source.clone(), index));
                }
            }
            Some(self.take())
        } else {
            None
        };
        self.drafts.push(draft);
        cut
    }

    /// The current source was read up to its committed length `len`: its
    /// watermark `len` travels with the chunk that holds its last draft (or
    /// the next one).
    pub(crate) fn end_source(&mut self, len: u64) {
        if let Some(cursor) = self.current.take() {
            if len > cursor.done {
                self.completes.push((cursor.source, len));
            }
        }
    }

    /// The last chunk of the pass, `None` when it would be empty. A chunk with
    /// watermarks and no drafts moves the watermarks in memory only (they are
    /// written with the next append or at close).
    pub(crate) fn finish(&mut self) -> Option<Chunk<D>> {
        self.current = None;
        let chunk = self.take();
        (!chunk.is_empty()).then_some(chunk)
    }

    fn take(&mut self) -> Chunk<D> {
        Chunk {
            drafts: mem::replace(&mut self.drafts, Vec::with_capacity(self.max.min(1024))),
            completes: mem::take(&mut self.completes),
        }
    }
}

#[cfg(test)]
mod tests;
