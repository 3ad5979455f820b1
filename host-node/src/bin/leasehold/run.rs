//! `leasehold run`: queue a file of command lines in one statement, work the
//! queue until every one of them is done or dead-lettered, print a summary.

use crate::args::{Global, RunArgs};
use crate::fail::{CliError, EXIT_DEAD_LETTERED, EXIT_INTERRUPTED};
use crate::handler::payload;
use crate::pool::{Interrupts, Pool, PoolConfig};
use indicatif::{ProgressBar, ProgressStyle};
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{EnqueueOptions, JobTally, Store};
use std::io::{IsTerminal, Read};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often the run's jobs are tallied while they are worked.
const POLL: Duration = Duration::from_millis(200);
/// How often a plain progress line is printed when stderr is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(1);

/// The command lines of `text`: trimmed, blank lines and `#` comments skipped.
pub fn command_lines(text: &str) -> Vec<&str> {
    numbered_lines(text).map(|(_, line)| line).collect()
}

/// The command lines of `text` with their line numbers (from 1).
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().map(str::trim).enumerate().filter(|(_, l)| !l.is_empty() && !l.starts_with('#')).map(|(i, l)| (i + 1, l))
}

/// Refuses the whole input when any line could not be run (see
/// [`crate::exec::check_argument_sizes`]), naming the first such line by its
/// number: nothing is queued then.
fn check_lines(text: &str, source: &str) -> Result<(), CliError> {
    for (number, line) in numbered_lines(text) {
        if line.contains('\0') {
            // No program can be handed it (C strings end there), and the store refuses it.
            return Err(CliError::input(format!(
                "line {number} of {source} holds the NUL character (a zero byte), which no command line can carry; \
                 nothing was queued"
            )));
        }
        crate::exec::check_argument_sizes(line)
            .map_err(|e| CliError::input(format!("line {number} of {source}: {e}; nothing was queued")))?;
    }
    Ok(())
}

fn read_input(file: Option<&Path>) -> Result<(String, String), CliError> {
    let (bytes, source) = match file {
        None => read_stdin()?,
        Some(path) if path == Path::new("-") => read_stdin()?,
        Some(path) => std::fs::read(path)
            .map(|bytes| (bytes, path.display().to_string()))
            .map_err(|e| CliError::input(format!("cannot read the jobs file {}: {e}", path.display())))?,
    };
    let text = text_of(bytes, &source)?;
    Ok((text, source))
}

/// The jobs as text, or a refusal naming the first line that is not UTF-8
/// (by its number and its byte).
fn text_of(bytes: Vec<u8>, source: &str) -> Result<String, CliError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = e.utf8_error().valid_up_to();
        let number = bytes[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
        CliError::input(format!(
            "line {number} of {source} is not UTF-8 text (byte 0x{:02x} at byte {} of the line); nothing was queued",
            bytes[valid],
            valid - bytes[..valid].iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1) + 1
        ))
    })
}

fn read_stdin() -> Result<(Vec<u8>, String), CliError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::input(format!("cannot read the jobs from standard input: {e}")))?;
    Ok((bytes, "standard input".to_owned()))
}

/// Runs the command; answers the exit code (0, 1 with dead letters, 130
/// when interrupted).
pub async fn run(store: &Store, global: &Global, args: &RunArgs, events: &Path) -> Result<u8, CliError> {
    crate::pool::check_timings(global.stale_after, global.heartbeat_every, args.worker.grace)
        .map_err(|e| e.noting(" (nothing was queued)"))?;
    let (text, source) = read_input(args.file.as_deref())?;
    check_lines(&text, &source)?;
    let lines = command_lines(&text);
    if lines.is_empty() {
        errln!("leasehold: no jobs in {source}");
        return Ok(0);
    }
    let mut interrupts = Interrupts::listen()?;
    let options = EnqueueOptions { max_attempts: args.job.max_attempts, timeout: args.job.timeout, ..Default::default() };
    let jobs: Vec<_> = lines.iter().map(|line| (payload(line), options.clone())).collect();
    let started = Instant::now();
    let ids = store
        .enqueue_many(&args.job.queue, &jobs, TokioClock::new().now())
        .await
        .map_err(|e| crate::fail::in_flags(e).noting(" (nothing was queued)"))?;
    let pool = Pool::start(store, PoolConfig {
        queue: &args.job.queue,
        concurrency: args.worker.concurrency.unwrap_or_else(crate::default_concurrency),
        grace: args.worker.grace,
        stale_after: global.stale_after,
        heartbeat_every: global.heartbeat_every,
        events,
        metrics: None,
    })
    .await?;
    let mut progress = Progress::new(ids.len() as u64);
    let mut tick = tokio::time::interval(POLL);
    let interrupted = loop {
        tokio::select! {
            _ = tick.tick() => match store.tally(&ids).await {
                Ok(tally) => {
                    progress.show(&tally);
                    if tally.unsettled() == 0 {
                        break false;
                    }
                }
                // A passing database error: the workers back off and retry, so do we.
                Err(e) => tracing::warn!("cannot read the run's progress: {e}"),
            },
            () = interrupts.next() => break true,
        }
    };
    if interrupted {
        progress.suspend(|| errln!("leasehold: interrupted; finishing the running commands (Ctrl-C again ends them)"));
    }
    pool.drain(&mut interrupts).await;
    let tally = store.tally(&ids).await?;
    progress.finish();
    print_summary(ids.len(), &tally, started.elapsed());
    Ok(if interrupted {
        errln!(
            "leasehold: {} jobs left queued; `leasehold work --until-empty --queue {}` finishes them",
            tally.unsettled(),
            args.job.queue
        );
        EXIT_INTERRUPTED
    } else if tally.dead > 0 {
        EXIT_DEAD_LETTERED
    } else {
        0
    })
}

fn print_summary(jobs: usize, tally: &JobTally, took: Duration) {
    outln!("jobs:                              {jobs}");
    outln!("done:                              {}", tally.succeeded);
    // Deleted by another worker's `work --delete-succeeded`, or by a purge:
    // their attempts went with them, so the attempt counts leave them out,
    // and say so.
    let not_counted = if tally.deleted > 0 {
        outln!("deleted once finished:             {}", tally.deleted);
        format!(" (not counting the {} deleted jobs)", tally.deleted)
    } else {
        String::new()
    };
    outln!("failed then retried:               {}{not_counted}", tally.retried);
    outln!("dead-lettered:                     {}", tally.dead);
    if tally.cancelled > 0 {
        outln!("cancelled:                         {}", tally.cancelled);
    }
    outln!("reclaimed from a lost worker:      {}{not_counted}", tally.reclaimed);
    outln!("time taken:                        {:.2}s", took.as_secs_f64());
}

/// A progress bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    last_plain: Option<(Instant, u64)>,
}

impl Progress {
    fn new(total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} settled  {msg}  [{elapsed}]") {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar, total, last_plain: None }
    }

    fn show(&mut self, tally: &JobTally) {
        let settled = tally.succeeded + tally.dead + tally.deleted;
        let mut msg = format!("{} done, {} retried, {} dead-lettered", tally.succeeded, tally.retried, tally.dead);
        if tally.deleted > 0 {
            msg.push_str(&format!(", {} deleted once finished", tally.deleted));
        }
        if let Some(bar) = &self.bar {
            bar.set_position(settled);
            bar.set_message(msg);
            return;
        }
        let due = self.last_plain.is_none_or(|(at, last)| at.elapsed() >= PLAIN_EVERY && last != settled);
        if due {
            errln!("progress: {settled}/{} settled ({msg})", self.total);
            self.last_plain = Some((Instant::now(), settled));
        }
    }

    fn suspend(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::command_lines;

    #[test]
    fn blank_lines_and_comments_are_not_jobs() {
        let text = "# header\n\n  gzip -k a.txt  \n   # indented comment\necho 'b' | wc -c\n";
        assert_eq!(command_lines(text), vec!["gzip -k a.txt", "echo 'b' | wc -c"]);
    }
}
