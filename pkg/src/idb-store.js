'use strict';
/*
 * The job records of `leasehold/indexeddb` and every write to them, each one IndexedDB
 * transaction: enqueue, claim a page, renew, settle (complete, fail: retry or dead
 * letter), release, cancel, retry, pause, resume, and the reads behind counts and job.
 *
 * This module stores and fences; it decides no policy. Which running job may be taken
 * over, and when a job cancelled while it ran may run again, is the core's rule (`judge`:
 * the lease watch and the lease liveness), how
 * long a failed attempt waits is the core's retry backoff (`retryDelayMs`), the lease
 * timing is the runner's.
 *
 * The fence: every job record carries `token`, which only grows: each claim or takeover
 * gives it the next value, and so do a cancel and a dead letter by takeover. A renewal or
 * settle names the token its claim got and changes the record only while the job is
 * still running under that token, answering whether it did. IndexedDB serializes
 * readwrite transactions over the same store, across every page and worker of the
 * origin, so the read and the write of one fenced step cannot interleave with another's.
 *
 * Durable when: a transaction's `complete` event is the commit, seen by every tab; every
 * operation here answers only after it. With the browser's default durability (Chromium:
 * relaxed) a commit survives the tab and the browser closing, and may be lost by an OS
 * crash or power cut; `durability: 'strict'` flushes each commit to disk first.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the build script
 * wraps it as an ES module).
 */

/** A request's result, as a promise. */
function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * A job set's error naming what was wrong: `code` 'UNKNOWN_JOB' (no such id), 'JOB_STATE'
 * (the job is not in a state the operation applies to): nothing was changed. 'QUEUE_CLOSED': the connection is closed (by `close()`, or
 * because another page opened a newer version of the database, or deleted it).
 */
class QueueError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'QueueError';
    this.code = code;
  }
}

const MIN = -Infinity;
const MAX = Infinity;

/** The attempt log entry of the attempt a record's current claim is. */
function attemptOf(job, endedAt, outcome, error) {
  return { token: job.token, owner: job.owner, startedAt: job.claimedAt, endedAt, outcome, error };
}

/* A running record leaves its lease behind when it stops running. */
function unlease(job) {
  job.owner = null;
  job.claimedAt = null;
  job.heartbeatAt = null;
  job.leaseMs = null;
  job.expiresAt = undefined; // out of the lease index
}

/**
 * The job store over an open database. `durability`: the transactions' durability hint;
 * `retryDelayMs(attempt)`: the wait after failed attempt `attempt` (from 1);
 * `judge(queue, running, cancelled, leaseMs, nowMs)`: given every running job of `queue`
 * and every queued one that carries the lease of an attempt cancelled while it ran, as one
 * claim read them, `{ takeable, unwatched }`: the running jobs that may be taken over
 * (their owner is not working any more), and the ids of those queued jobs not to claim yet.
 */
function createJobStore(db, { durability, retryDelayMs, judge, onClosed }) {
  let closed;
  db.onversionchange = (event) => {
    // A delete is a version change to null: say which, as the two call for different fixes.
    closed = event.newVersion === null
      ? `the database "${db.name}" was deleted (indexedDB.deleteDatabase, or the site's data was cleared), so this connection closed itself`
      : 'another page opened a newer version of the database, so this connection closed itself';
    db.close();
    if (onClosed) onClosed();
  };
  db.onclose = () => {
    closed = closed ?? 'the browser closed the database (its storage was cleared, or it failed)';
    if (onClosed) onClosed();
  };
  const options = durability === undefined ? undefined : { durability };

  /** Runs `body(stores)` in one transaction; answers its result after the commit. */
  function transaction(names, mode, body) {
    if (closed !== undefined) return Promise.reject(new QueueError('QUEUE_CLOSED', `leasehold/indexeddb: ${closed}`));
    return new Promise((resolve, reject) => {
      let t;
      try {
        t = db.transaction(names, mode, options);
      } catch (error) {
        reject(error);
        return;
      }
      const stores = {};
      for (const name of typeof names === 'string' ? [names] : names) stores[name] = t.objectStore(name);
      let result;
      let failure;
      t.oncomplete = () => resolve(result);
      t.onabort = () => reject(failure ?? t.error ?? new Error('leasehold/indexeddb: the transaction was aborted'));
      Promise.resolve()
        .then(() => body(stores))
        .then(
          (value) => {
            result = value;
          },
          (error) => {
            failure = error;
            try {
              t.abort();
            } catch {
              /* already finished: onabort or oncomplete reports */
            }
          },
        );
    });
  }

  /** Adds a job (or finds the one with its idempotency key). `record` is complete but for id. */
  function enqueue(record) {
    return transaction(['jobs', 'queues'], 'readwrite', async ({ jobs, queues }) => {
      if (record.idempotencyKey !== null) {
        const existing = await done(jobs.index('key').getKey([record.queue, record.idempotencyKey]));
        if (existing !== undefined) return { id: existing, created: false };
      }
      const id = await done(jobs.add(record));
      const known = await done(queues.getKey(record.queue));
      if (known === undefined) queues.put({ queue: record.queue, paused: false });
      return { id, created: true };
    });
  }

  /* Gives `job` to `owner` under a new token from `now` (a claim or a takeover). */
  function lease(job, owner, leaseMs, now) {
    job.state = 'running';
    job.token += 1;
    job.attempts += 1;
    job.owner = owner;
    job.claimedAt = now;
    job.heartbeatAt = now;
    job.leaseMs = leaseMs;
    job.expiresAt = now + leaseMs;
  }

  /**
   * Claims up to `n` jobs of `queue` for `owner` in one transaction: first running jobs
   * that `judge` calls given up by their owner (taken over, or dead-lettered
   * when that was their last attempt), then due queued jobs, lower priority first, then
   * earlier due time, then lower id, but not those `judge` holds back (a cancelled attempt
   * of theirs may still be working). None from a paused queue. Answers the claimed
   * records (each with its new token) in that order.
   */
  function claim(queue, owner, leaseMs, n, now) {
    return transaction(['jobs', 'queues'], 'readwrite', async ({ jobs, queues }) => {
      const state = await done(queues.get(queue));
      if (state !== undefined && state.paused) return [];
      const claimed = [];
      // Whole ranges in one request each (getAll), not a cursor step per job: each request
      // is a round trip to the browser's storage process.
      // Every lease, not only the expired ones: the core's lease watch times each from when
      // it was renewed (see `judge`). The lease index holds the running jobs and the queued
      // ones that still carry a cancelled attempt's lease (see `cancel`; rarely any), and no
      // state sorts between those two: one range reads both.
      const leases = await done(jobs.index('lease').getAll(IDBKeyRange.bound([queue, 'queued', MIN], [queue, 'running', MAX])));
      const running = leases.filter((job) => job.state === 'running');
      const cancelled = leases.filter((job) => job.state === 'queued');
      const { takeable, unwatched } = judge(queue, running, cancelled, leaseMs, now);
      for (const job of takeable) {
        if (claimed.length >= n) break;
        const lost = attemptOf(job, now, 'lease-lost', `the lease went stale: no renewal since ${job.heartbeatAt}`);
        job.log.push(lost);
        if (job.attempts < job.maxAttempts) {
          lease(job, owner, leaseMs, now);
          claimed.push(job);
        } else {
          job.token += 1;
          job.state = 'dead';
          job.finishedAt = now;
          job.lastError = `lease lost on the final attempt: ${lost.error}`;
          unlease(job);
        }
        jobs.put(job);
      }
      // Due queued jobs in claim order. The index orders each priority's jobs by due time, so
      // once one is not due yet the rest of its priority is not either. Claimed jobs leave the
      // range (this transaction reads its own writes), so a full read goes on from the last
      // job read, or past the last priority read when that one is not due yet. The jobs held
      // back stay in the range: each read asks for that many more than there is room for, so
      // a read that finds fewer reached the range's end, and the next one always moves on.
      let lower = [queue, 'queued', MIN, MIN];
      while (claimed.length < n) {
        const room = n - claimed.length;
        const asked = room + unwatched.size;
        const found = await done(jobs.index('due').getAll(IDBKeyRange.bound(lower, [queue, 'queued', MAX, MAX]), asked));
        let notDue; // the priority whose rest is not due yet
        for (const job of found) {
          if (claimed.length >= n) break; // the read may find more than the room
          if (job.priority === notDue) continue;
          if (job.runAt > now) {
            notDue = job.priority;
            continue;
          }
          if (unwatched.has(job.id)) continue; // a cancelled attempt of it may still be working
          lease(job, owner, leaseMs, now);
          jobs.put(job);
          claimed.push(job);
        }
        if (found.length < asked) break;
        const last = found[found.length - 1];
        lower = [queue, 'queued', last.priority, last.priority === notDue ? MAX : last.runAt];
      }
      return claimed;
    });
  }

  /* Applies `change(job)` to each fenced job still running under its token, in one transaction; answers a boolean per fence. */
  function fenced(fences, change) {
    return transaction('jobs', 'readwrite', async ({ jobs }) => {
      // Every read at once (one round trip for all), then the writes.
      const found = await Promise.all(fences.map((fence) => done(jobs.get(fence.id))));
      return fences.map((fence, i) => {
        const job = found[i];
        const held = job !== undefined && job.state === 'running' && job.token === fence.token;
        if (held) {
          change(job, fence);
          jobs.put(job);
        }
        return held;
      });
    });
  }

  /** Renews the leases of `fences` ({ id, token } each) from `now`, in one transaction: per fence, whether it still held. */
  function renewAll(fences, now) {
    return fenced(fences, (job) => {
      job.heartbeatAt = now;
      job.expiresAt = now + job.leaseMs;
    });
  }

  /** Renews the lease of `fence` from `now`: true when it still held it. */
  async function renew(fence, now) {
    const [landed] = await renewAll([fence], now);
    return landed;
  }

  /**
   * Settles attempts, each fenced: `{ id, token, ok: true, result }` completes the job
   * with `result`; `{ id, token, ok: false, error }` fails the attempt: queued again after
   * the retry backoff while attempts remain, dead-lettered on the last. Answers, per
   * settle, 'succeeded' | 'retrying' | 'dead' | 'lost' (the fence refused: nothing written).
   */
  async function settle(settles, now) {
    const outcomes = [];
    const landed = await fenced(settles, (job, s) => {
      if (s.ok) {
        job.log.push(attemptOf(job, now, 'succeeded', null));
        job.state = 'succeeded';
        job.result = s.result;
        job.finishedAt = now;
      } else {
        job.log.push(attemptOf(job, now, 'failed', s.error));
        job.lastError = s.error;
        if (job.attempts < job.maxAttempts) {
          job.state = 'queued';
          job.runAt = now + retryDelayMs(job.attempts);
        } else {
          job.state = 'dead';
          job.finishedAt = now;
        }
      }
      unlease(job);
      outcomes.push(job.state);
    });
    let i = 0;
    return landed.map((held) => {
      if (!held) return 'lost';
      const state = outcomes[i++];
      return state === 'queued' ? 'retrying' : state;
    });
  }

  /** Hands claimed, unperformed jobs back (queued, the attempt not counted). */
  function release(fences) {
    return fenced(fences, (job) => {
      job.state = 'queued';
      job.attempts -= 1;
      unlease(job);
    });
  }

  /* Runs `change` on every listed job, or on none: the first refusal throws and aborts the transaction. */
  function each(ids, change) {
    return transaction('jobs', 'readwrite', async ({ jobs }) => {
      const records = [];
      for (const id of ids) {
        const job = await done(jobs.get(id));
        if (job === undefined) throw new QueueError('UNKNOWN_JOB', `leasehold/indexeddb: there is no job ${id}`);
        records.push(job);
      }
      for (const job of records) {
        change(job);
        jobs.put(job);
      }
      return ids;
    });
  }

  /**
   * Cancels queued or running jobs (a running one's token moves: its owner's next write is
   * refused). A running job keeps its lease (its end `expiresAt`, last renewal and window):
   * its owner, which may not have heard the cancel (a frozen tab), stops its work by then
   * at the latest, so `retry` does not let another worker start it earlier, and a claimant
   * that has not watched that lease for its window does not start it at all (see `claim`).
   * A queued job keeps it too: it has one only as a job cancelled while it ran and retried
   * since, whose owner may still work.
   */
  function cancel(ids, reason, by, now) {
    return each(ids, (job) => {
      if (job.state !== 'queued' && job.state !== 'running') {
        throw new QueueError('JOB_STATE', `leasehold/indexeddb: job ${job.id} is ${job.state}; only queued or running jobs can be cancelled`);
      }
      const { heartbeatAt, leaseMs, expiresAt } = job;
      if (job.state === 'running') job.log.push(attemptOf(job, now, 'cancelled', reason));
      job.token += 1;
      job.state = 'cancelled';
      job.finishedAt = now;
      job.cancellation = { at: now, by, reason };
      unlease(job);
      Object.assign(job, { heartbeatAt, leaseMs, expiresAt });
    });
  }

  /**
   * Queues dead or cancelled jobs again, due now, with a fresh attempt budget (the log is
   * kept); a job cancelled while it ran, once the lease of that attempt would have gone
   * stale, if that is later (see `cancel`). That lease stays on the queued job until a
   * claim replaces it, so a cancel and retry while it waits keep that due time.
   */
  function retry(ids, now) {
    return each(ids, (job) => {
      if (job.state !== 'dead' && job.state !== 'cancelled') {
        throw new QueueError('JOB_STATE', `leasehold/indexeddb: job ${job.id} is ${job.state}; only dead or cancelled jobs can be retried`);
      }
      const leaseEnd = job.state === 'cancelled' && typeof job.expiresAt === 'number' ? job.expiresAt : undefined;
      job.state = 'queued';
      job.runAt = Math.max(now, leaseEnd ?? now);
      job.expiresAt = leaseEnd;
      job.attempts = 0;
      job.finishedAt = null;
      job.cancellation = null;
    });
  }

  /**
   * Sets a queue's paused flag; answers whether it changed. A queue nothing was enqueued to
   * yet can be paused (its first jobs then wait for the resume).
   */
  function setPaused(queue, paused) {
    return transaction('queues', 'readwrite', async ({ queues }) => {
      const known = await done(queues.get(queue));
      if ((known?.paused ?? false) === paused) return false;
      queues.put({ queue, paused });
      return true;
    });
  }

  /** Every queue with its jobs counted by state (queued ones split into queued, scheduled, retrying at `now`). */
  function counts(now) {
    return transaction(['jobs', 'queues'], 'readonly', async ({ jobs, queues }) => {
      const out = [];
      for (const { queue, paused } of await done(queues.getAll())) {
        const row = { queue, paused, queued: 0, scheduled: 0, running: 0, retrying: 0, succeeded: 0, dead: 0, cancelled: 0 };
        for (const state of ['running', 'succeeded', 'dead', 'cancelled']) {
          row[state] = await done(jobs.index('state').count([queue, state]));
        }
        for (const job of await done(jobs.index('state').getAll([queue, 'queued']))) row[shownState(job, now)] += 1;
        out.push(row);
      }
      return out;
    });
  }

  /** One job's record, or undefined. */
  function get(id) {
    return transaction('jobs', 'readonly', ({ jobs }) => done(jobs.get(id)));
  }

  return { enqueue, claim, renew, renewAll, settle, release, cancel, retry, setPaused, counts, get, close: () => db.close() };
}

/**
 * The state a job is shown in, as the native stores show it: a queued job with attempts
 * counted is 'retrying', one with none and not due yet 'scheduled'.
 */
function shownState(job, now) {
  if (job.state !== 'queued') return job.state;
  if (job.attempts > 0) return 'retrying';
  return job.runAt > now ? 'scheduled' : 'queued';
}

module.exports = { createJobStore, shownState, QueueError };
