// leasehold/postgres and leasehold/pglite run in Node.js only. A browser bundle of either
// (the `browser` condition, which bundlers targeting browsers resolve) gets a module that
// loads without Node.js and whose connect says so, naming leasehold/indexeddb; it had the
// Node.js modules, which need node:fs and __dirname (Vite built a page that threw
// "__dirname is not defined" as it loaded; webpack and esbuild failed naming fs).
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
