// Compares the built package with the seed runner on the shared throughput workload
// (`runner-throughput.mjs`: N no-op items claimed from an array and performed in one pass).
//
//   node bench/compare.mjs [path/to/runner-throughput.mjs] [--runs R] [--n N] [--only c16-hb]
//
// Without a path, the workload is looked for at ../shared/bench/ beside the repository root.
// For each configuration (concurrency 1 and 16, heartbeat off/on, trace off/on) it runs the
// seed reference and the package in turn, R times each (default 7), each run a fresh Node.js
// process, and prints the median items/s of both and their ratio (package / seed; the target
// is ≥ 1.0), and the median of the ratios of the back-to-back pairs (steadier when the
// machine's load drifts). Then it counts the calls from JS into wasm per item.
// Build the package first (scripts/build-pkg.sh). A benchmark, not a test: figures only.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, '..');
const repoRoot = path.resolve(pkgDir, '..');

const args = process.argv.slice(2);
let workload;
let runs = 7;
let n = 200_000;
let only;
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--n') n = Number(args[++i]);
  else if (args[i] === '--only') only = args[++i];
  else workload = path.resolve(args[i]);
}
workload ??= path.resolve(repoRoot, '..', 'shared', 'bench', 'runner-throughput.mjs');
if (!existsSync(workload)) {
  console.error(`compare: no workload at ${workload}; pass the path to runner-throughput.mjs`);
  process.exit(2);
}
if (!existsSync(path.join(pkgDir, 'dist', 'index.cjs'))) {
  console.error('compare: pkg/dist is missing; run scripts/build-pkg.sh first');
  process.exit(2);
}
if (!(runs >= 1 && n >= 1)) {
  console.error('compare: --runs and --n must be positive numbers');
  process.exit(2);
}

const configs = [];
for (const concurrency of [1, 16]) {
  for (const hb of [false, true]) {
    for (const trace of [false, true]) {
      const label = `c${concurrency}${hb ? '-hb' : ''}${trace ? '-trace' : ''}`;
      if (!only || only === label) configs.push({ label, concurrency, hb, trace });
    }
  }
}

function once(impl, { concurrency, hb, trace }) {
  const out = execFileSync(
    process.execPath,
    [workload, impl, String(n), String(concurrency), hb ? 'hb' : '', trace ? 'trace' : ''],
    { encoding: 'utf8' },
  );
  const line = JSON.parse(out.trim().split('\n').at(-1));
  if (line.performed !== n) throw new Error(`${impl} performed ${line.performed} of ${n}`);
  return line.itemsPerSec;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

console.log(`workload: ${workload}`);
console.log(`N = ${n} items per run, ${runs} runs per side, alternating seed / package; medians in items/s`);
console.log('');
console.log('config            seed      package   ratio   pairwise');
const ratios = [];
for (const config of configs) {
  const seed = [];
  const pkg = [];
  for (let r = 0; r < runs; r += 1) {
    // Alternate which side goes first, so drift in machine load hits both alike.
    if (r % 2 === 0) {
      seed.push(once('reference', config));
      pkg.push(once(pkgDir, config));
    } else {
      pkg.push(once(pkgDir, config));
      seed.push(once('reference', config));
    }
  }
  const ratio = median(pkg) / median(seed);
  const pairwise = median(pkg.map((p, i) => p / seed[i]));
  ratios.push(ratio);
  console.log(
    `${config.label.padEnd(16)} ${String(Math.round(median(seed))).padStart(8)}  ${String(Math.round(median(pkg))).padStart(8)}   ${ratio.toFixed(2)}    ${pairwise.toFixed(2)}`,
  );
}
console.log(`lowest ratio: ${Math.min(...ratios).toFixed(2)} (target ≥ 1.00)`);

// Crossings: every method of the wasm Core, counted in this process over one pass.
const require = createRequire(path.join(pkgDir, 'package.json'));
const bindings = require(path.join(pkgDir, 'dist', 'leasehold_node.cjs'));
const counts = new Map();
for (const key of Object.getOwnPropertyNames(bindings.Core.prototype)) {
  const original = bindings.Core.prototype[key];
  if (key === 'constructor' || typeof original !== 'function') continue;
  bindings.Core.prototype[key] = function counted(...a) {
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.apply(this, a);
  };
}
const { createJobRunner } = require(pkgDir);
const items = 10_000;
console.log('');
console.log(`calls into wasm over one pass of ${items} items (whole pass, per item)`);
for (const config of configs) {
  counts.clear();
  let next = 0;
  const runner = createJobRunner({
    name: 'count',
    intervalMs: 1000,
    staleAfterMs: 30000,
    batchLimit: items + 1,
    concurrency: config.concurrency,
    logger: () => ({ error() {} }),
    claim: async () => (next < items ? next++ : null),
    perform: async () => {},
    heartbeat: config.hb ? async () => true : undefined,
    onEvent: config.trace ? () => {} : undefined,
  });
  await runner.tick();
  await runner.dispose();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const detail = [...counts].map(([k, v]) => `${k} ${v}`).join(', ');
  console.log(`${config.label.padEnd(16)} ${(total / items).toFixed(4)} per item  (${detail})`);
}
