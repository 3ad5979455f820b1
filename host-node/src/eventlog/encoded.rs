//! Events serialised ahead of their append, so the CPU work of a chunk can
//! run while the fsync of the chunk before it is in flight.
//!
//! They are serialised straight into the frame the append will write (see
//! [`leasehold_core::pump::frame`]): records whose sequence numbers are set
//! when the append knows them. The append then only numbers them, adds the
//! watermarks and the checksum, and writes the buffer as it is.

use leasehold_core::pump::frame::{BatchEncoder, BodySum, FRAME_HEAD_LEN, number_ahead, renumber};

use super::record::{EventRecordRef, check_depth};
use super::{EventRecord, LogError};

/// The JSON payloads of a batch of events, in order, laid out as an
/// unfinished frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedEvents {
    frame: Vec<u8>,
    records: u32,
    /// Set by [`EncodedEvents::number_from`]: the first sequence number the
    /// records hold and their checksum; cleared by any change.
    numbered: Option<(u64, BodySum)>,
}

impl Default for EncodedEvents {
    fn default() -> Self {
        Self::with_capacity(0, 0)
    }
}

impl EncodedEvents {
    /// Serialises `events` (in order).
    ///
    /// # Errors
    /// As [`EncodedEvents::push`].
    pub fn encode(events: &[EventRecord]) -> Result<Self, LogError> {
        let mut out = EncodedEvents::with_capacity(events.len(), events.len() * 160);
        for event in events {
            out.push(event)?;
        }
        Ok(out)
    }

    /// An empty batch with room for `events` events of `bytes` bytes of JSON
    /// in all, so filling it does not copy what it holds as it grows.
    pub fn with_capacity(events: usize, bytes: usize) -> Self {
        let mut frame = Vec::with_capacity(FRAME_HEAD_LEN + 8 + bytes + 12 * events);
        BatchEncoder::begin(&mut frame);
        EncodedEvents { frame, records: 0, numbered: None }
    }

    /// Bytes of JSON held (and of record framing).
    pub fn byte_len(&self) -> usize {
        self.frame.len() - FRAME_HEAD_LEN - 4
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
        self.numbered = None;
        let mut frame = BatchEncoder::resume(&mut self.frame, 0, self.records);
        // Numbered by the append (`seal`); the encoder rolls a failed record back.
        frame.record(0, |b| serde_json::to_writer(b, event).map_err(LogError::from))?;
        self.records = frame.len();
        Ok(())
    }

    /// How many events.
    pub fn len(&self) -> usize {
        self.records as usize
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Numbers the events from `first` and checksums them now, ahead of the
    /// append: an [`EventLog::append_encoded`](super::EventLog::append_encoded)
    /// that gives them exactly these numbers then only adds the watermarks,
    /// so the log's thread spends its time on the write and the fsync. The
    /// pump calls it with the log's next sequence number
    /// ([`LogHead::next_seq`](super::LogHead::next_seq)) plus the events of
    /// the appends still in flight. A wrong guess costs nothing but the
    /// work: the append numbers the events again. Adding events afterwards
    /// undoes it. `first` is a sequence number. Never
    /// fails.
    pub fn number_from(&mut self, first: u64) {
        let sum = number_ahead(&mut self.frame, 0, self.records, first);
        self.numbered = Some((first, sum));
    }

    /// The finished frame: the records numbered from `first`, then `marks`,
    /// length and checksum.
    ///
    /// # Errors
    /// [`LogError::Encode`] for a source name over 64 KiB or a frame over
    /// 4 GiB.
    pub(crate) fn seal<S: AsRef<str>>(mut self, first: u64, marks: &[(S, u64)]) -> Result<Vec<u8>, LogError> {
        let sum = match self.numbered {
            Some((numbered, sum)) if numbered == first => Some(sum),
            _ => {
                renumber(&mut self.frame, 0, self.records, first);
                None
            }
        };
        BatchEncoder::resume(&mut self.frame, 0, self.records)
            .finish_summed(marks.iter().map(|(s, p)| (s.as_ref(), *p)), sum)?;
        Ok(self.frame)
    }
}
