//! Compaction: the log rewritten without the records retention lets go.

use std::sync::Arc;

use leasehold_core::Millis;
use leasehold_core::pump::frame::RecordRef;
use leasehold_core::pump::rewrite::{RewriteError, Rewritten, rewrite};

use super::error::io_err;
use super::record::RecordHead;
use super::{EventLog, LogError, parent_dir, sibling};

impl EventLog {
    /// Drops every record for which `drops(source, at)` answers true, and
    /// records `marks` as the log's watermarks (the caller's current ones,
    /// which are true of the log). Answers how many records went; when none
    /// would, the log is left untouched.
    ///
    /// The kept records (same sequence numbers, same epoch) and the marks are
    /// written to `<log>.compact`, synced, renamed over the log, and the
    /// directory synced. A record whose payload does not parse is kept.
    ///
    /// # Errors
    /// [`LogError::Io`]: before the rename the log is untouched and usable;
    /// after it, the log is marked broken and the next append reopens it
    /// (the compacted file is then the log). Also when the file is not what
    /// this writer wrote (changed behind its back): nothing is compacted, the
    /// log is marked broken, and the next append keeps that file aside and
    /// starts a new log. [`LogError::Replaced`] when a
    /// broken log had to be created anew on reopening.
    pub fn compact<S: AsRef<str>>(
        &mut self,
        mut drops: impl FnMut(&str, Millis) -> bool,
        marks: impl IntoIterator<Item = (S, u64)>,
    ) -> Result<u64, LogError> {
        self.writable()?;
        let storage = Arc::clone(&self.storage);
        let path = self.path.clone();
        let bytes = storage.read(&path).map_err(io_err("read", &path))?.unwrap_or_default();
        // A file changed behind the writer (an older copy restored, a
        // truncation) must not be compacted into the log under this epoch
        // with this writer's newer watermarks: the log is broken instead,
        // and the next append's reopen keeps the file aside and starts anew.
        if !self.is_intact(&bytes) {
            self.broken = true;
            return Err(LogError::Io { op: "compact", path, source: super::gone() });
        }
        let valid = &bytes[..self.len as usize];
        let marks: Vec<(S, u64)> = marks.into_iter().collect();
        let highest = self.next_seq.checked_sub(1);
        let keep = |record: RecordRef<'_>| {
            !serde_json::from_slice::<RecordHead>(record.payload).is_ok_and(|head| drops(&head.source, Millis(head.at)))
        };
        let Rewritten { bytes: out, dropped, kept: kept_count } =
            match rewrite(valid, highest, self.max_batch, &marks, keep) {
                Ok(Some(rewritten)) => rewritten,
                Ok(None) => return Ok(0),
                // The open checked every frame; a frame that no longer checks
                // means the file changed under us: compact nothing rather
                // than guess.
                Err(RewriteError::Corrupt(_)) => return Ok(0),
                Err(RewriteError::Encode(e)) => return Err(e.into()),
            };

        let temp = sibling(&path, ".compact");
        let written = storage.create(&temp).map_err(io_err("create", &temp)).and_then(|mut file| {
            file.append(&out).map_err(io_err("write", &temp))?;
            file.sync().map_err(io_err("fsync", &temp))
        });
        if let Err(e) = written.and_then(|()| storage.rename(&temp, &path).map_err(io_err("rename", &temp))) {
            // Before the rename: the log is untouched.
            let _ = storage.remove(&temp);
            return Err(e);
        }
        // After the rename the open handle is the old file: until the new one
        // is open (and the rename durable), the log is broken, and the
        // compacted file is the one a reopen must find.
        self.broken = true;
        self.file = None;
        self.len = out.len() as u64;
        self.tail = super::tail_of(&out);
        storage.sync_dir(parent_dir(&path)).map_err(io_err("fsync directory", &path))?;
        let mut file = storage.open_append(&path).map_err(io_err("open", &path))?;
        super::lock_file(&mut *file, &path)?;
        self.file = Some(file);
        self.broken = false;
        self.records = kept_count;
        self.dropped += dropped;
        // The file now reserves every number below `next_seq`.
        self.reserved = true;
        self.marks = marks.iter().map(|(s, p)| (s.as_ref().to_owned(), *p)).collect();
        Ok(dropped)
    }
}
