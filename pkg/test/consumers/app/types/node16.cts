// A strict TypeScript user under module node16: the CommonJS view.
import leasehold = require('leasehold');

const runner = leasehold.createJobRunner({
  name: 'typed-cjs',
  intervalMs: 100,
  staleAfterMs: 3000,
  heartbeat: () => true,
  claim: () => 'item',
  perform: (item: string) => void item.length,
});
runner.start();
// @ts-expect-error staleAfterMs is required with a heartbeat
leasehold.createJobRunner({ name: 'x', intervalMs: 1, claim: () => 1, perform: () => {}, heartbeat: () => true });

// leasehold/indexeddb, required.
import indexeddb = require('leasehold/indexeddb');

void indexeddb.connect({ name: 'typed-cjs' }).then((queue) => queue.pause('mail'));

// leasehold/otel, required.
import otel = require('leasehold/otel');
import api = require('@opentelemetry/api');

const sink: (event: leasehold.JobEvent) => void = otel.jobEventSpans({ tracer: api.trace.getTracer('typed-cjs'), destination: 'mail' });
void sink;

// The job queue from CommonJS.
import postgres = require('leasehold/postgres');
import pgliteQueue = require('leasehold/pglite');

declare const pool: { query(): unknown; connect(): unknown; end(): unknown; readonly totalCount: number; readonly idleCount: number };
void postgres.connect(pool).then((queue) => queue.enqueue('mail', { to: 'ada' }));
void pgliteQueue.connect({ dataDir: '/tmp/queue' }).then((queue) => queue.cancel([1, 2], { reason: 'typed' }));
