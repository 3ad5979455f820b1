// leasehold/postgres, leasehold/pglite and leasehold/eventlog run in Node.js only. A browser
// bundle of one (the `browser` condition, which bundlers targeting browsers resolve) gets a
// module that loads without Node.js and whose calls say so (the queues naming
// leasehold/indexeddb); it had the Node.js modules, which need node:fs and __dirname (Vite
// built a page that threw "__dirname is not defined" as it loaded; webpack and esbuild failed
// naming fs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));

test('leasehold/postgres and leasehold/pglite under the browser condition say they run in Node.js only', () => {
  // The bundle's view: no __dirname, require or process; each import of the package resolves
  // with the browser condition first, as bundlers targeting browsers resolve it.
  const script = `
    delete globalThis.process;
    const out = {};
    for (const subpath of ['postgres', 'pglite']) {
      const lib = await import('leasehold/' + subpath);
      const error = await lib.connect({ dataDir: '/tmp/x' }).then(() => null, (e) => e);
      out[subpath] = { message: error?.message, named: Object.keys(lib).sort(), schema: new lib.LeaseholdSchemaError('m').name };
    }
    console.log(JSON.stringify(out));`;
  const run = spawnSync(process.execPath, ['--conditions=browser', '--input-type=module', '-e', script], { cwd: pkg, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  for (const subpath of ['postgres', 'pglite']) {
    assert.match(out[subpath].message, new RegExp(`^leasehold/${subpath} runs in Node\\.js only \\(.+\\); in a browser, use leasehold/indexeddb`));
    assert.deepEqual(out[subpath].named, ['LeaseholdSchemaError', 'connect', 'default']);
    assert.equal(out[subpath].schema, 'LeaseholdSchemaError');
  }
});

test('leasehold/eventlog under the browser condition says it runs in Node.js only, with the Node.js entry\'s names and numbers', async () => {
  const script = `
    delete globalThis.process;
    const lib = await import('leasehold/eventlog');
    const refusals = [];
    for (const call of [() => lib.EventLog.open('/tmp/x/events.log'), () => lib.EventPump.open({}), () => lib.readEventLog('x', 0), () => new lib.EventPump({})]) {
      try { await call(); refusals.push(null); } catch (e) { refusals.push(e.message); }
    }
    const error = new lib.EventLogError('m', 'EVENTLOG_IO');
    console.log(JSON.stringify({ refusals, named: Object.keys(lib).sort(), max: lib.MAX_CHUNK_SIZE, chunk: lib.DEFAULT_CHUNK_SIZE, error: [error.name, error.code] }));`;
  const run = spawnSync(process.execPath, ['--conditions=browser', '--input-type=module', '-e', script], { cwd: pkg, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  for (const message of out.refusals) assert.match(String(message), /^leasehold\/eventlog runs in Node\.js only/);
  const node = await import('leasehold/eventlog');
  assert.deepEqual(out.named, Object.keys(node).sort());
  assert.deepEqual([out.max, out.chunk], [node.MAX_CHUNK_SIZE, node.DEFAULT_CHUNK_SIZE]);
  assert.deepEqual(out.error, ['EventLogError', 'EVENTLOG_IO']);
});
