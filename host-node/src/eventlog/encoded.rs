//! Events serialised ahead of their append, so the CPU work of a chunk can
//! run while the fsync of the chunk before it is in flight.

use super::record::{EventRecordRef, check_depth};
use super::{EventRecord, LogError};

/// The JSON payloads of a batch of events, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncodedEvents {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl EncodedEvents {
    /// Serialises `events` (in order).
    ///
    /// # Errors
    /// [`LogError::Encode`] for an event that does not serialise.
    pub fn encode(events: &[EventRecord]) -> Result<Self, LogError> {
        let mut out = EncodedEvents { bytes: Vec::with_capacity(events.len() * 160), ends: Vec::new() };
        for event in events {
            out.push(event)?;
        }
        Ok(out)
    }

    /// An empty batch with room for `events` events of `bytes` bytes of JSON
    /// in all, so filling it does not copy what it holds as it grows.
    pub fn with_capacity(events: usize, bytes: usize) -> Self {
        EncodedEvents { bytes: Vec::with_capacity(bytes), ends: Vec::with_capacity(events) }
    }

    /// Bytes of JSON held.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Serialises one more event.
    ///
    /// # Errors
    /// [`LogError::Encode`] for an event that does not serialise, or whose
    /// body or identity nests deeper than
    /// [`MAX_VALUE_DEPTH`](super::MAX_VALUE_DEPTH) (nothing of it is kept).
    pub fn push(&mut self, event: &EventRecord) -> Result<(), LogError> {
        check_depth(std::iter::once(&event.body).chain(event.identity.values())).map_err(LogError::Encode)?;
        self.push_serialized(event)
    }

    /// [`EncodedEvents::push`] of a record borrowed from its parts.
    pub(crate) fn push_ref(&mut self, event: &EventRecordRef<'_>) -> Result<(), LogError> {
        check_depth(std::iter::once(event.body).chain(event.identity.values())).map_err(LogError::Encode)?;
        self.push_serialized(event)
    }

    fn push_serialized(&mut self, event: &impl serde::Serialize) -> Result<(), LogError> {
        let at = self.bytes.len();
        if let Err(e) = serde_json::to_writer(&mut self.bytes, event) {
            self.bytes.truncate(at);
            return Err(e.into());
        }
        self.ends.push(self.bytes.len());
        Ok(())
    }

    /// How many events.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Each event's JSON, in order.
    pub(crate) fn payloads(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(start, end)| &self.bytes[start..end])
    }
}
