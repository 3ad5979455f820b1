// The record codec's table as the runner glue reads it: every code and field offset by
// name, and event objects that must match the core's event listing (checked at load).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const dist = path.dirname(require.resolve('leasehold'));
const wasm = require(path.join(dist, 'leasehold_node.cjs'));
const timing = require(path.join(dist, 'timing.js'));
const { createApi } = require(path.join(dist, 'runner.js'));

/* The bindings with `protocol()` changed by `edit`. */
function withProtocol(edit) {
  const protocol = wasm.protocol();
  edit(protocol);
  return { ...wasm, protocol: () => protocol, Core: wasm.Core, wasmMemory: wasm.wasmMemory, jobBackoff: wasm.jobBackoff };
}

test('the glue loads over the table the wasm exports', () => {
  assert.equal(typeof createApi(wasm, timing).createJobRunner, 'function');
});

test('event builders that drift from the core listing are refused at load, naming the type', () => {
  const swapped = withProtocol((p) => {
    const performed = p.eventKinds.find((k) => k.type === 'performed');
    performed.fields = performed.fields.filter(([name]) => name !== 'durationMs');
  });
  assert.throws(() => createApi(swapped, timing), /'performed' events unlike the core's listing/);
  const renamed = withProtocol((p) => {
    p.eventKinds.find((k) => k.type === 'claimed').fields[1][0] = 'ordinal';
  });
  assert.throws(() => createApi(renamed, timing), /'claimed' events unlike/);
});
