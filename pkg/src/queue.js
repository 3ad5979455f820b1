'use strict';
/*
 * The durable queue of the Node.js stores (`leasehold/postgres`, `leasehold/pglite`): the
 * Rust store's schema and statements, executed through a database adapter (postgres.js for
 * a node-postgres pool, pglite.js for PGlite), so the `leasehold` command-line tool, Rust
 * services and Node.js workers share one queue.
 *
 * Nothing here is SQL: every statement comes from the package's generated catalogue of
 * core/sql/postgres (dist/postgres-sql.cjs), bound by its parameters' names. What is policy
 * comes from the core through the wasm module: the retry delays a failed attempt waits,
 * the recovery backoff of a settle the database did not answer (`policy`). The lease, its
 * renewals, supervision and abort are the runner's (runner.js).
 *
 * An adapter is `{ run(statement, values) → rows, transaction(fn(via)) → fn's answer,
 * snapshot(beginStatement, fn(via)), listen(channel, onPayload, onLost) → stop(), close() }`
 * (`via` runs statements on the transaction's connection, `via.script(text)` a migration); rows are plain objects by
 * column name (bigint columns as numbers or decimal strings: both are read here).
 */

const os = require('node:os');
const { randomUUID } = require('node:crypto');
const input = require('./queue-input.js');
const { startWork } = require('./queue-work.js');
const { migrate } = require('./queue-migrate.js');


/** A bigint column (a number, or the decimal string node-postgres answers) as a safe integer. */
function int(value, what) {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`leasehold: ${what} ${value} is beyond 2^53 - 1, which JavaScript numbers cannot hold exactly`);
  return n;
}

/**
 * @param {object} adapter  the database (see the header)
 * @param {object} deps     { sql: the statement catalogue, api: the runner API, policy, where: the entry's name }
 */
function createQueue(adapter, deps, { owned = false, watchLeases = false } = {}) {
  const { sql, api, policy } = deps;
  const queueName = input.queueNameRule(policy.limits);
  const owner = { host: `node@${os.hostname()}`, pid: process.pid, nonce: randomUUID() };
  const wakers = new Map(); // queue -> Set of wake functions
  const cancels = new Set(); // cancelled(id, token) of each work
  let listening; // Promise of the LISTEN's stop function
  let schema = 'public';
  let closed = false;
  const reclaimLooked = new Map(); // queue -> ms of the last look for stale leases
  /*
   * With `watchLeases` (PGlite: the database's clock is this process's wall clock), per queue
   * the core's lease watch: a stale lease is taken over only once this queue has seen it
   * unrenewed for longer than its window on the monotonic clock (performance.now()). A step
   * of the wall clock (an NTP correction, a laptop waking from sleep) makes every running
   * lease look stale at once while its owner works on. Likewise a job cancelled while it ran
   * and retried is due at that attempt's lease end, on the wall clock, while its owner may
   * work on until that end on its timers: it is claimed only once this queue has watched
   * that lease for its window (the claim statements' `watched`). PostgreSQL's server clock
   * is no worker's, and its leases are judged on it alone.
   */
  const watches = watchLeases ? new Map() : undefined;
  function watchOf(queue) {
    let watch = watches.get(queue);
    if (watch === undefined) {
      watch = policy.leaseWatch();
      watches.set(queue, watch);
    }
    return watch;
  }
  const heartbeatOf = (row) => (row.heartbeat_at === null || row.heartbeat_at === undefined ? undefined : int(row.heartbeat_at, 'heartbeat_at'));

  /**
   * A look: every lease of `queue` read into its watch at `mono`, the running jobs' (this
   * claim's own among them: read after it) and the cancelled attempts' leases that queued
   * jobs carry; the watch forgets the leases the look did not read (they ended or moved on).
   */
  async function readLeases(queue, watch, mono) {
    for (const row of await run('running_leases', { queue })) {
      const id = int(row.id, 'job id');
      const token = int(row.token, 'token');
      if (row.cancelled) watch.cancelledUnrenewedFor(id, token, heartbeatOf(row), int(row.lease_ms, 'lease_ms'), mono);
      else watch.sight(id, token, heartbeatOf(row), mono);
    }
    watch.forgetUnseenSince(mono);
  }

  /**
   * The claim statements' `watched`: the cancelled attempts' leases of `queue` watched for
   * their window by now, as 'id:token' (PGlite); null where the database's clock alone
   * judges (a PostgreSQL server: no gate).
   */
  function watchedArg(queue) {
    return watches === undefined ? null : watchOf(queue).cancelledWatched(performance.now());
  }

  /** Runs catalogue statement `name` with `args` bound by parameter name. */
  function run(name, args = {}, via = adapter.run) {
    const statement = sql.statements[name];
    if (statement === undefined) throw new Error(`leasehold: the package's statement catalogue has no ${name}`);
    const values = statement.params.map((param) => {
      if (!(param in args)) throw new Error(`leasehold: statement ${name} binds ${param}, which the caller did not give`);
      return args[param];
    });
    return via({ name: `leasehold_${name}`, text: statement.text }, values);
  }

  const ownerArgs = {
    owner_host: owner.host,
    owner_pid: owner.pid,
    owner_nonce: owner.nonce,
    owner_start_time: null,
    owner_boot_id: null,
  };

  /**
   * The claim statement's settle parameters for `completions` (in ascending id order: the
   * order every batch over running jobs locks its rows in; the caller's array is left as is,
   * its answers are matched to it by id).
   */
  function settleArgs(completions) {
    const batch = [...completions].sort((a, b) => a.job.id - b.job.id);
    return {
      settle_ids: batch.map((c) => c.job.id),
      settle_tokens: batch.map((c) => c.job.token),
      settle_results: batch.map((c) => c.result),
    };
  }

  function job(row, reclaimed = false, queue) {
    return {
      id: int(row.id, 'job id'),
      queue,
      token: int(row.token, 'token'),
      payload: JSON.parse(row.payload),
      attempt: Number(row.attempts),
      maxAttempts: Number(row.max_attempts),
      timeoutMs: int(row.timeout_ms, 'timeout_ms'),
      reclaimed,
    };
  }

  /** Whether a claim of `queue` now looks for stale leases: once per min(1 s, lease), and again after a look that found some. */
  function lookForStale(queue, leaseMs) {
    const now = Date.now();
    const last = reclaimLooked.get(queue);
    if (last !== undefined && now >= last && now - last < Math.min(policy.reclaimEveryMs, leaseMs)) return false;
    reclaimLooked.set(queue, now);
    return true;
  }

  const store = {
    get closed() {
      return closed;
    },
    integer: input.integer,

    /**
     * Claims a page of `queue` (and takes over the stale leases a look finds, but not the
     * ids of iterable `refused`: jobs whose outcome this worker holds). The completions
     * `completer` holds waiting ride along: the claim statement settles them first, each
     * under its fence, in the same round trip.
     */
    async claimPage(queue, pageSize, leaseMs, refused, completer) {
      const look = lookForStale(queue, leaseMs);
      const riders = completer?.ride();
      const claimed = [];
      const stale = [];
      try {
        // One statement per shape (PostgreSQL caches one plan for each): with
        // riders, the claim that completes them first; without, the claim alone.
        const riding = riders?.items ?? [];
        const rows = await run(riding.length > 0 ? 'claim' : 'claim_only', {
          queue,
          page_size: pageSize,
          ...ownerArgs,
          lease_ms: leaseMs,
          look_for_stale: look,
          refused_ids: look ? [...refused] : [], // read only by a claim that looks
          watched: watchedArg(queue),
          ...(riding.length > 0 ? settleArgs(riding) : {}),
        });
        const landed = new Set();
        for (const row of rows) {
          if (row.kind === 'claimed') claimed.push([Number(row.priority), int(row.run_at, 'run_at'), job(row, false, queue), row.now]);
          else if (row.kind === 'stale') stale.push(row);
          else landed.add(int(row.id, 'job id'));
        }
        riders?.answered(riders.items.map((c) => landed.has(c.job.id)));
      } catch (error) {
        riders?.failed(error); // tried again by their settle, as any failed flush
        throw error;
      }
      // RETURNING order is unspecified: hand the page out in the queue's order.
      claimed.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2].id - b[2].id);
      const page = claimed.map((entry) => entry[2]);
      let gone = stale;
      if (watches !== undefined) {
        const watch = watchOf(queue);
        const mono = performance.now();
        if (look) {
          await readLeases(queue, watch, mono);
        } else {
          for (const [, , claimedJob, at] of claimed) watch.sight(claimedJob.id, claimedJob.token, int(at, 'now'), mono);
        }
        gone = stale.filter((s) => watch.unrenewedFor(int(s.id, 'job id'), int(s.token, 'token'), heartbeatOf(s), int(s.lease_ms, 'lease_ms'), mono));
      }
      if (stale.length > 0) reclaimLooked.delete(queue); // there may be more than one look could take
      if (gone.length > 0) {
        const taken = await takeOver(queue, gone, leaseMs);
        if (watches !== undefined) {
          const watch = watchOf(queue);
          const mono = performance.now();
          for (const t of taken) watch.sight(t.job.id, t.job.token, int(t.at, 'now'), mono);
        }
        page.unshift(...taken.map((t) => t.job));
      }
      return page;
    },

    /** Renews the leases of `jobs` in one statement; answers the ids whose fence held. */
    async renewMany(jobs) {
      const rows = await run('renew', { ids: jobs.map((j) => j.id), tokens: jobs.map((j) => j.token), owner_nonce: null });
      return rows.map((row) => int(row.id, 'job id'));
    },

    async renew(claimed) {
      const rows = await run('renew', { ids: [claimed.id], tokens: [claimed.token], owner_nonce: null });
      return rows.length > 0;
    },

    /**
     * Completions of `queue`'s jobs, coalesced: each goes with the next claim statement
     * that starts while it waits (`claimPage`), or else in a flush of its own, the
     * completion statement alone. Either way each job is completed under its fence, kept
     * as succeeded with its result.
     */
    completer(queue, leaseMs) {
      return coalescer(async (batch) => {
        const rows = await run('complete', settleArgs(batch));
        const landed = new Set(rows.map((row) => int(row.id, 'job id')));
        return batch.map((c) => landed.has(c.job.id));
      });
    },

    async fail(claimed, error) {
      const rows = await run('fail', { id: claimed.id, token: claimed.token, retry_delays_ms: policy.retryDelaysMs, error, result: null });
      return rows.length > 0;
    },

    async release(jobs) {
      await run('release', { ids: jobs.map((j) => j.id), tokens: jobs.map((j) => j.token) });
    },

    /**
     * Calls `wake` whenever `queue` gets due work (NOTIFY from any process), and
     * `cancelled(id, token)` when a running job is cancelled; answers the unsubscribe.
     */
    subscribe(queue, wake, cancelled) {
      let set = wakers.get(queue);
      if (set === undefined) wakers.set(queue, (set = new Set()));
      set.add(wake);
      cancels.add(cancelled);
      listening ??= adapter
        .listen(sql.channel, deliver, wakeAll)
        .catch(() => {
          listening = undefined; // polling goes on; the next work() tries again
          return () => Promise.resolve();
        });
      return () => {
        set.delete(wake);
        cancels.delete(cancelled);
      };
    },
  };

  /** A notification `<schema>/<queue>` (an enqueue or retry) or `<schema>/cancel/<id>/<token>`. */
  function deliver(payload) {
    if (typeof payload !== 'string' || !payload.startsWith(`${schema}/`)) return;
    const rest = payload.slice(schema.length + 1);
    if (rest.startsWith('cancel/')) {
      const [, id, token] = rest.split('/');
      for (const cancelled of cancels) cancelled(Number(id), Number(token));
      return;
    }
    for (const wake of wakers.get(rest) ?? []) wake();
  }

  function wakeAll() {
    for (const set of wakers.values()) for (const wake of set) wake();
  }

  async function takeOver(queue, stale, leaseMs) {
    const note = `lease expired; reclaimed by ${owner.host} pid ${owner.pid}`;
    const rows = await run('take_over', {
      ids: stale.map((s) => s.id),
      tokens: stale.map((s) => s.token),
      nonces: stale.map((s) => s.owner_nonce),
      heartbeats: stale.map((s) => s.heartbeat_at),
      notes: stale.map(() => note),
      old_hosts: stale.map((s) => s.owner_host),
      old_pids: stale.map((s) => s.owner_pid),
      old_start_times: stale.map((s) => s.owner_start_time),
      old_boot_ids: stale.map((s) => s.owner_boot_id),
      old_claimed_at: stale.map((s) => s.claimed_at ?? 0),
      ...ownerArgs,
      lease_ms: leaseMs,
    });
    return rows.filter((row) => row.kind === 'claimed').map((row) => ({ job: job(row, true, queue), at: row.now }));
  }

  function checkOpen(where) {
    if (closed) throw Object.assign(new Error(`${where}: the queue is closed`), { code: 'QUEUE_CLOSED' });
  }

  const working = new Set();

  const queueApi = {
    async enqueue(queue, payload, options) {
      checkOpen('enqueue');
      queueName('enqueue', queue);
      const text = input.jsonText('enqueue', 'payload', payload);
      const o = input.enqueueOptions(options, policy.maxAttempts, policy.limits);
      for (let tries = 0; tries < 5; tries += 1) {
        const rows = await run('enqueue', {
          queue,
          payloads: [text],
          priorities: [o.priority],
          run_at: [o.runAt],
          delays_ms: [o.delayMs],
          max_attempts: [o.maxAttempts],
          timeouts_ms: [o.timeoutMs],
          keys: [o.key],
        });
        if (rows.length > 0) {
          if (o.runAt === null && o.delayMs === 0) for (const wake of wakers.get(queue) ?? []) wake();
          return { id: int(rows[0].id, 'job id'), created: true };
        }
        // The key is taken: the job holding it, read in a new snapshot.
        const found = await run('keyed_jobs', { queue, keys: [o.key] });
        if (found.length > 0) return { id: int(found[0].id, 'job id'), created: false };
        // That job was deleted in between: the key is free again.
      }
      throw new Error(`enqueue: the job holding idempotency key ${JSON.stringify(o.key)} was deleted five times in a row before its id could be read`);
    },

    work(queue, handler, options) {
      checkOpen('work');
      queueName('work', queue);
      const w = startWork(store, api, policy, queue, handler, options);
      working.add(w);
      const dispose = () => w.dispose().finally(() => working.delete(w));
      const handle = { dispose };
      if (typeof Symbol.asyncDispose === 'symbol') handle[Symbol.asyncDispose] = dispose;
      return handle;
    },

    async counts() {
      checkOpen('counts');
      // The dashboard overview's statements, in one snapshot: queued jobs split by due time
      // and attempts (queued, scheduled, retrying), running, dead and cancelled, succeeded.
      const [queued, running, parked, succeeded, paused] = await adapter.snapshot(sql.statements.read_snapshot, async (via) => [
        await run('dashboard_queued', {}, via),
        await run('dashboard_running', {}, via),
        await run('dashboard_parked', {}, via),
        await run('dashboard_succeeded', {}, via),
        await run('paused_queues', {}, via),
      ]);
      const pausedSet = new Set(paused.map((row) => row.queue));
      const byQueue = new Map();
      const entry = (queue) => {
        let counts = byQueue.get(queue);
        if (counts === undefined) {
          counts = { queue, paused: pausedSet.has(queue), queued: 0, scheduled: 0, running: 0, retrying: 0, succeeded: 0, dead: 0, cancelled: 0 };
          byQueue.set(queue, counts);
        }
        return counts;
      };
      for (const row of queued) {
        const counts = entry(row.queue);
        for (const state of ['queued', 'scheduled', 'retrying']) counts[state] = int(row[state], 'count');
      }
      for (const row of running) entry(row.queue).running = int(row.n, 'count');
      for (const row of parked) if (row.state === 'dead' || row.state === 'cancelled') entry(row.queue)[row.state] = int(row.n, 'count');
      for (const row of succeeded) entry(row.queue).succeeded = int(row.n, 'count');
      for (const queue of pausedSet) entry(queue);
      return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
    },

    async job(id) {
      checkOpen('job');
      input.jobIds('job', id);
      // One snapshot for the job row and its attempt log.
      const [row, attempts, results] = await adapter.snapshot(sql.statements.read_snapshot, async (via) => {
        const found = await run('job', { id }, via);
        if (found.length === 0) return [];
        return [found[0], await run('job_attempts', { id }, via), await run('results', { id }, via)];
      });
      if (row === undefined) return null;
      return jobRecord(row, attempts, results);
    },

    async cancel(ids, options = {}) {
      checkOpen('cancel');
      const list = input.jobIds('cancel', ids);
      if (options === null || typeof options !== 'object') throw new TypeError('cancel: options must be an object');
      for (const name of Object.keys(options)) {
        if (name !== 'reason') throw input.unknownOption('cancel', name, ['reason']);
      }
      const reason = options.reason === undefined ? null : input.cancelReason(options.reason, policy.limits);
      const by = `${os.userInfo().username}@${owner.host}`;
      const note = reason === null ? `cancelled by ${by}` : `cancelled by ${by}: ${reason}`;
      return steer('cancel', list, ['queued', 'running'], (via) =>
        run('cancel', { ids: list, queue: null, states: ['queued', 'running'], by, reason, note }, via),
      );
    },

    async retry(ids) {
      checkOpen('retry');
      const list = input.jobIds('retry', ids);
      return steer('retry', list, ['dead', 'cancelled'], (via) => run('retry', { ids: list, queue: null, states: ['dead', 'cancelled'] }, via));
    },

    async pause(queue) {
      checkOpen('pause');
      queueName('pause', queue);
      // Whether this statement paused it: of two pauses at once, one answers true.
      const added = await run('pause_queue', { queue, by: `${os.userInfo().username}@${owner.host}` });
      return added.changed === 1;
    },

    async resume(queue) {
      checkOpen('resume');
      queueName('resume', queue);
      const removed = await run('resume_queue', { queue });
      if (removed.changed === 0) return false;
      await run('notify_queue', { queue });
      return true;
    },

    async close() {
      if (closed) return;
      await Promise.all([...working].map((w) => w.dispose()));
      closed = true;
      if (listening !== undefined) await (await listening)();
      if (owned) await adapter.close();
    },
  };
  if (typeof Symbol.asyncDispose === 'symbol') queueApi[Symbol.asyncDispose] = queueApi.close;

  /** Changes the jobs `ids` all together or not at all (a transaction rolled back when fewer changed). */
  async function steer(where, ids, states, statement) {
    const unique = [...new Set(ids)];
    const changed = await adapter.transaction(async (via) => {
      const rows = await statement(via);
      if (rows.length !== unique.length) {
        const known = await run('job_states', { ids: unique }, via);
        const state = new Map(known.map((row) => [int(row.id, 'job id'), row.state]));
        const refused = unique
          .filter((id) => !rows.some((row) => int(row.id, 'job id') === id))
          .map((id) => (state.has(id) ? `job ${id} is ${state.get(id)}` : `job ${id} does not exist`));
        const error = new RangeError(`${where}: ${refused.join('; ')} (it applies to ${states.join(' or ')} jobs); nothing was changed`);
        // The codes leasehold/indexeddb's QueueError has for the same refusals, so code written
        // for any store can tell them apart.
        error.code = unique.some((id) => !state.has(id)) ? 'UNKNOWN_JOB' : 'JOB_STATE';
        error.rollback = true;
        throw error;
      }
      return rows.map((row) => int(row.id, 'job id'));
    });
    return changed.sort((a, b) => a - b);
  }

  /** Reads the schema and migrates it (or says exactly why not); answers the queue. */
  async function open({ migrate: wanted = true } = {}) {
    await migrate(adapter, run, sql, policy.migrations, wanted);
    schema = (await run('current_schema'))[0].current_schema;
    return queueApi;
  }

  return { open, queue: queueApi, owner };
}

/**
 * Coalesces concurrent writes into one statement per flush, without a timer: the first
 * write goes out at once; writes arriving while `depth` statements are in flight wait for
 * the next one, so under load batches grow by themselves and an idle queue adds no latency.
 * `flushBatch(items)` answers one outcome per item; a failed statement rejects every write
 * in it (none of them landed). Two flushes in flight never share a job (each write is one
 * job's, sent once) and each locks its rows in id order, so they cannot deadlock.
 *
 * Another statement may carry the waiting writes instead (`ride()`: the claim statement
 * settles and claims in one round trip); it counts as one in flight while it runs.
 */
function coalescer(flushBatch, { max = 500, depth = 2 } = {}) {
  const waiting = [];
  let inFlight = 0;
  const idle = [];
  function answer(batch, answers, error) {
    if (error === undefined) for (let i = 0; i < batch.length; i += 1) batch[i].resolve(answers[i]);
    else for (const w of batch) w.reject(error);
    inFlight -= 1;
    pump();
  }
  function pump() {
    while (inFlight < depth && waiting.length > 0) {
      const batch = waiting.splice(0, max);
      inFlight += 1;
      Promise.resolve()
        .then(() => flushBatch(batch.map((w) => w.item)))
        .then(
          (answers) => answer(batch, answers),
          (error) => answer(batch, undefined, error),
        );
    }
    if (inFlight === 0 && waiting.length === 0) for (const resolve of idle.splice(0)) resolve();
  }
  return {
    complete(job, result) {
      return new Promise((resolve, reject) => {
        waiting.push({ item: { job, result }, resolve, reject });
        pump();
      });
    },
    /**
     * Takes the waiting writes (up to `max`) for a statement of the caller's: answer them
     * with `answered(outcomes)` (one per item, in `items`' order) or `failed(error)`,
     * exactly once. Until then that statement counts as one in flight.
     */
    ride() {
      const batch = waiting.splice(0, max);
      inFlight += 1;
      return {
        items: batch.map((w) => w.item),
        answered: (answers) => answer(batch, answers),
        failed: (error) => answer(batch, undefined, error),
      };
    },
    /** Resolves once nothing is waiting or in flight. */
    flush() {
      if (inFlight === 0 && waiting.length === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}

/** A job row, its attempt log (leasehold_attempt_log rows) and its recorded results as JobRecord. */
function jobRecord(row, attempts, results) {
  // A succeeded job's result is its succeeding attempt's (the row's token), null when the
  // handler answered nothing (no result row is written then); another job shows the latest
  // attempt's that recorded one (the command-line tool records a failed command's too).
  const last = row.state === 'succeeded'
    ? results.find((r) => String(r.token) === String(row.token)) ?? { result: 'null' }
    : results[results.length - 1];
  const record = {
    id: int(row.id, 'job id'),
    queue: row.queue,
    state: row.shown_state, // as counts() tells queued jobs apart (job.sql)
    payload: JSON.parse(row.payload),
    priority: Number(row.priority),
    runAt: int(row.run_at, 'run_at'),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    idempotencyKey: row.idempotency_key,
    timeoutMs: int(row.timeout_ms, 'timeout_ms'),
    token: int(row.token, 'token'),
    error: row.last_error,
    ...(last === undefined ? {} : { result: JSON.parse(last.result) }),
    createdAt: int(row.created_at, 'created_at'),
    finishedAt: int(row.finished_at, 'finished_at'),
    attemptsLog: attempts.map((a) => ({
      token: int(a.token, 'token'),
      owner: `${a.owner_host} pid ${a.owner_pid}`,
      startedAt: int(a.started_at, 'started_at'),
      endedAt: int(a.ended_at, 'ended_at'),
      outcome: a.outcome,
      error: a.error,
    })),
  };
  if (row.state === 'running') {
    record.attemptsLog.push({
      token: record.token,
      owner: `${row.owner_host} pid ${row.owner_pid}`,
      startedAt: int(row.claimed_at, 'claimed_at'),
      endedAt: null,
      outcome: 'running',
      error: null,
    });
  }
  if (row.cancelled_at !== null && row.cancelled_at !== undefined) {
    record.cancellation = { at: int(row.cancelled_at, 'cancelled_at'), by: row.cancelled_by, reason: row.cancel_reason };
  }
  return record;
}

module.exports = { createQueue, int };
