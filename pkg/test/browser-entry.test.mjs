// The browser entry's loading rules, exercised in Node.js (which can import it as it is):
// nothing works before a module is loaded, and says so; initSync takes the bytes or a
// compiled module; init takes a promise; the trace ring needs initTrace of its own.
// Each test imports its own copy of dist/ (the glue keeps the instance in module state).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = new URL('../dist/', import.meta.url);
const scratch = await mkdtemp(path.join(tmpdir(), 'leasehold-entry-'));
test.after(() => rm(scratch, { recursive: true, force: true }));
let copies = 0;
async function freshEntry() {
  const copy = path.join(scratch, String((copies += 1)));
  await cp(dist, copy, { recursive: true });
  return import(pathToFileURL(path.join(copy, 'browser.mjs')).href);
}
const bytes = (name) => readFile(new URL(name, dist));
const options = { name: 'entry', intervalMs: 10, claim: () => null, perform: () => {} };

test('before init every call that needs the module throws, saying to await init() first', async () => {
  const lib = await freshEntry();
  for (const call of [
    () => lib.createJobRunner(options),
    () => lib.jobBackoff(10),
    () => lib.leasePolicy(),
    () => lib.leaseLiveness(),
    () => lib.heartbeatLoop({}),
  ]) {
    assert.throws(call, { name: 'Error', message: /needs the WebAssembly module, which is not loaded yet: `await init\(\)` first/ });
  }
  assert.equal(lib.DEFAULT_JOB_BATCH_LIMIT, undefined);
  // The error classes and codes need no module.
  assert.equal(new lib.JobClaimLostError('x').code, lib.JOB_CLAIM_LOST);
  assert.equal(new lib.LeaseLostError('r', { type: 'lapsed', unconfirmedMs: 1 }).code, lib.LEASE_LOST);
});

test('initSync takes the bytes; the API then works and a second load does nothing', async () => {
  const lib = await freshEntry();
  assert.throws(() => lib.initSync(), { name: 'TypeError', message: /initSync\(module\)/ });
  lib.initSync(await bytes('leasehold_bg.wasm'));
  assert.equal(lib.DEFAULT_JOB_BATCH_LIMIT, 25);
  assert.equal(lib.default.DEFAULT_JOB_BATCH_LIMIT, 25);
  const runner = lib.createJobRunner(options);
  assert.deepEqual({ ...(await runner.tick()) }, { claimed: 0, performed: 0, failed: 0, claimLost: 0 });
  await runner.dispose();
  await lib.init(new Promise(() => {})); // not awaited: already loaded
});

test('init takes a promise of a compiled module; trace sinks wait for initTrace', async () => {
  const lib = await freshEntry();
  await lib.init(WebAssembly.compile(await bytes('leasehold_bg.wasm')));
  assert.equal(lib.jobBackoff(100).maxMs, 1000);
  assert.throws(() => lib.createJobTraceSink(), { name: 'Error', message: /trace sink needs .*`await initTrace\(\)` first/ });
  await lib.initTrace(bytes('leasehold_trace_bg.wasm'));
  const sink = lib.createJobTraceSink({ capacity: 2 });
  assert.equal(sink.capacity, 2);
  assert.equal(lib.resumeJobTrace(sink.save()).size, 0);
});

test('a failed init can be retried', async () => {
  const lib = await freshEntry();
  await assert.rejects(lib.init(new Uint8Array([0, 1, 2, 3])));
  assert.throws(() => lib.createJobRunner(options), /await init\(\)/);
  await lib.init(await bytes('leasehold_bg.wasm'));
  assert.equal(typeof lib.createJobRunner(options).start, 'function');
});

test('init and initTrace left to find their .wasm say where they looked and that a URL can be given', async () => {
  // Node.js's fetch takes no file: URL, so the .wasm beside the entry cannot be fetched here,
  // as a page bundled by esbuild (a 404) or as an iife (import.meta.url empty: "Invalid URL")
  // cannot fetch it; the loader's own message alone did not say what to do.
  const lib = await freshEntry();
  await assert.rejects(lib.init(), (error) => {
    assert.match(error.message, /^leasehold: init\(\) could not load leasehold_bg\.wasm from beside the package's dist\/browser\.mjs \(.+\)\. /);
    assert.match(error.message, /give its URL: `await init\(url\)`$/);
    assert.ok(error.cause, 'the loader\'s error is the cause');
    return true;
  });
  await assert.rejects(lib.initTrace(), /initTrace\(\) could not load leasehold_trace_bg\.wasm .*`await initTrace\(url\)`$/);
  // What answers in place of the file (a server's page: no wasm magic word) is a file not
  // found there too; a module found but refused (as a Content-Security-Policy refuses it) is
  // the engine's own error, which says why, not a hint to look elsewhere.
  const { fetch } = globalThis;
  const { warn } = console;
  try {
    console.warn = () => {}; // the glue's note that it falls back from instantiateStreaming
    globalThis.fetch = async () => new Response('<!doctype html><title>app</title>', { headers: { 'content-type': 'text/html' } });
    await assert.rejects(lib.init(), /could not load leasehold_bg\.wasm .*magic word.*`await init\(url\)`$/);
    const truncated = (await bytes('leasehold_bg.wasm')).subarray(0, 64);
    globalThis.fetch = async () => new Response(truncated, { headers: { 'content-type': 'application/wasm' } });
    await assert.rejects(lib.init(), (error) => error instanceof WebAssembly.CompileError);
  } finally {
    globalThis.fetch = fetch;
    console.warn = warn;
  }
  // A given input that fails is the loader's own error, naming what it was given.
  await assert.rejects(lib.init(new Uint8Array([0, 1, 2, 3])), (error) => !/beside the package/.test(error.message));
  await lib.init(await bytes('leasehold_bg.wasm'));
  await lib.initTrace(bytes('leasehold_trace_bg.wasm'));
});
