// The sizes the README and the types give for the two browser .wasm modules (what a page
// fetches) are those of the build, within 1.5 KiB: they had said about 38 KiB for the runner's
// after it had grown to 44.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const read = (file) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
const text = `${read('README.md')} ${read('src/index.d.ts')}`;
const kib = (file) => gzipSync(readFileSync(new URL(`../dist/${file}`, import.meta.url)), { level: 9 }).length / 1024;

test('the README and index.d.ts give each browser .wasm its gzipped size', () => {
  const claims = {
    'leasehold_bg.wasm': [/WebAssembly \(about (\d+) KiB gzipped/g, /leasehold_bg\.wasm \(about (\d+) KiB gzipped\)/g, /`leasehold_bg\.wasm`, about (\d+) KiB gzipped/g],
    'leasehold_trace_bg.wasm': [/and (\d+) KiB more for the trace ring/g, /second module \(about (\d+) KiB gzipped/g, /`leasehold_trace_bg\.wasm`, about (\d+) KiB gzipped/g],
  };
  for (const [file, patterns] of Object.entries(claims)) {
    const size = kib(file);
    for (const pattern of patterns) {
      const found = [...text.matchAll(pattern)];
      assert.ok(found.length > 0, `${pattern} is in the README or index.d.ts`);
      for (const [said, n] of found) {
        assert.ok(Math.abs(Number(n) - size) <= 1.5, `"${said}": ${file} is ${size.toFixed(1)} KiB gzipped`);
      }
    }
  }
});
