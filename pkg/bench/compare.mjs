// Compares the built package with the reference runner on the shared throughput workload
// (`runner-throughput.mjs`: N no-op items claimed from an array and performed in one pass).
// A benchmark, not a test: it prints figures. Build the package first (scripts/build-pkg.sh).
const HELP = `usage: node bench/compare.mjs [WORKLOAD] [--runs R] [--n N] [--only LABEL] [--all]

WORKLOAD   path to runner-throughput.mjs (default: ../shared/bench/ beside the repository)
--runs R   runs per side and configuration (default 5); each run is a fresh Node.js process,
           the two sides alternate and take turns going first
--n N      items per run (default 200000)
--only L   one configuration: c1, c16, c1-hb-trace, c16-hb-trace (with --all also c1-hb,
           c1-trace, c16-hb, c16-trace)
--all      all eight combinations of concurrency 1/16, heartbeat and trace, not only four

Prints the load average (os.loadavg(), 1/5/15 minutes) before and after the runs, then per
configuration: the median items/s of the reference runner and of the package, their ratio
(package / reference; the target is at least 1.10) and the median of the back-to-back pair
ratios with their lowest and highest (the spread a loaded machine gives); then the median CPU
time per item of each side (user + system of every thread, GC helpers included, over the pass
the workload times: steadier than wall time on a loaded machine), its ratio (reference /
package, so above 1 is the package ahead, like items/s) and the spread of its pairs. Then the
lowest of each ratio; on Linux the same for the main thread's CPU time alone (the thread the
runners' JavaScript and wasm run on: what items/s follows on an idle machine, where GC helper
threads run beside it); the calls from JS into wasm per item, and the heap each item in flight
holds at concurrency 64, package beside reference (the package's must be no larger).

Every process runs on the Node.js that runs this script, whose version the first line prints.
Another version, without installing it: npx -y node@24 bench/compare.mjs`;

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const pkgDir = path.resolve(path.dirname(self), '..');
const repoRoot = path.resolve(pkgDir, '..');
const args = process.argv.slice(2);

function fail(message) {
  console.error(`compare: ${message}`);
  process.exit(2);
}

/* Loads `createJobRunner` the way the workload does: the reference runner's module, or the package. */
async function load(impl) {
  if (impl.endsWith('.mjs')) return import(pathToFileURL(impl));
  return createRequire(path.join(impl, 'package.json'))(impl);
}

/*
 * The heap an item in flight holds: RUNNERS runners at concurrency 64 each take 64 items
 * whose performs wait, and the heap after a full collection is compared with the heap
 * before the runners were made (so each runner's own share is counted in too). Run in a
 * child process started with --expose-gc; prints one JSON line.
 */
async function heapProbe(impl) {
  const RUNNERS = 16;
  const POOL = 64;
  const { createJobRunner } = await load(impl);
  const releases = [];
  const started = () => releases.length === RUNNERS * POOL;
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const usage = async () => {
    for (let i = 0; i < 3; i += 1) {
      await settle();
      globalThis.gc();
    }
    const m = process.memoryUsage();
    return { heap: m.heapUsed, buffers: m.arrayBuffers };
  };
  const before = await usage();
  const runners = [];
  for (let r = 0; r < RUNNERS; r += 1) {
    let next = 0;
    runners.push(createJobRunner({
      name: `heap-${r}`, intervalMs: 1000, staleAfterMs: 30000, batchLimit: POOL, concurrency: POOL,
      logger: () => ({ error() {} }),
      claim: async () => (next < POOL ? next++ : null),
      perform: () => new Promise((resolve) => releases.push(resolve)),
    }));
  }
  const passes = runners.map((runner) => runner.tick());
  while (!started()) await settle();
  const during = await usage();
  for (const release of releases) release();
  await Promise.all(passes);
  await Promise.all(runners.map((runner) => runner.dispose()));
  const items = RUNNERS * POOL;
  console.log(JSON.stringify({
    heapPerItem: (during.heap - before.heap) / items,
    buffersPerItem: (during.buffers - before.buffers) / items,
  }));
}

if (args[0] === '--heap-probe') {
  await heapProbe(args[1]);
  process.exit(0);
}
if (args.includes('--help') || args.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}

let workload;
let runs = 5;
let n = 200_000;
let only;
let all = false;
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--n') n = Number(args[++i]);
  else if (args[i] === '--only') only = args[++i];
  else if (args[i] === '--all') all = true;
  else if (args[i].startsWith('-')) fail(`unknown option ${args[i]} (see --help)`);
  else workload = path.resolve(args[i]);
}
workload ??= path.resolve(repoRoot, '..', 'shared', 'bench', 'runner-throughput.mjs');
if (!existsSync(workload)) fail(`no workload at ${workload}; pass the path to runner-throughput.mjs`);
if (!existsSync(path.join(pkgDir, 'dist', 'index.cjs'))) fail('pkg/dist is missing; run scripts/build-pkg.sh first');
if (!(Number.isInteger(runs) && runs >= 1 && Number.isInteger(n) && n >= 1)) fail('--runs and --n must be positive whole numbers');
/* The reference runner the workload itself loads. */
const reference = path.resolve(path.dirname(workload), '..', 'conformance', 'reference', 'runner.mjs');

const configs = [];
const variants = all ? [[false, false], [false, true], [true, false], [true, true]] : [[false, false], [true, true]];
for (const concurrency of [1, 16]) {
  for (const [hb, trace] of variants) {
    const label = `c${concurrency}${hb ? '-hb' : ''}${trace ? '-trace' : ''}`;
    if (!only || only === label) configs.push({ label, concurrency, hb, trace });
  }
}
if (configs.length === 0) fail(`no configuration called ${only} (see --help)`);

/* Preloaded into each run: the CPU time (µs) between the workload's two clock readings
   (`process.hrtime.bigint()` before and after its pass), written to stderr at exit, so
   start-up and module loading are left out as they are from its items/s. Two figures: the
   whole process's (every thread: the garbage collector's helpers too), and, where Linux
   tells it (/proc/self/task/PID/schedstat, ns), the main thread's alone: the runner's
   JavaScript and wasm run there, and the pass cannot end sooner than it allows, so it is
   what items/s would follow if the machine were idle; on a loaded one the wall clock
   mostly measures the wait for a core. */
const CPU_PROBE = `
import { readFileSync } from 'node:fs';
const clock = process.hrtime.bigint;
const marks = [];
const mainThread = () => {
  try {
    return Number(readFileSync('/proc/self/task/' + process.pid + '/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
};
process.hrtime.bigint = function bigint() {
  if (marks.length < 2) {
    const cpu = process.cpuUsage();
    marks.push({ cpu: cpu.user + cpu.system, main: mainThread() });
  }
  return clock.call(process.hrtime);
};
process.on('exit', () => {
  if (marks.length === 2) process.stderr.write('cpu-us ' + (marks[1].cpu - marks[0].cpu) + ' main-ns ' + (marks[1].main - marks[0].main) + '\\n');
});`;

/* One run of the workload in a fresh process: items/s, and CPU ns per item of the process
   and of its main thread (NaN where the system does not tell it). */
function once(impl, { concurrency, hb, trace }) {
  const run = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(CPU_PROBE)}`, workload, impl, String(n), String(concurrency), hb ? 'hb' : '', trace ? 'trace' : ''],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`${impl} exited with ${run.status}: ${run.stderr}`);
  const line = JSON.parse(run.stdout.trim().split('\n').at(-1));
  if (line.performed !== n) throw new Error(`${impl} performed ${line.performed} of ${n}`);
  const probe = /cpu-us (\d+) main-ns (\d+|NaN)/.exec(run.stderr);
  return { ips: line.itemsPerSec, cpuNs: (Number(probe?.[1]) * 1000) / n, mainNs: Number(probe?.[2]) / n };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pad = (value, width) => String(value).padStart(width);
/* The median of the back-to-back pair ratios, with the lowest and highest. */
const spread = (pairs) => `${median(pairs).toFixed(2)} (${Math.min(...pairs).toFixed(2)}–${Math.max(...pairs).toFixed(2)})`;

/* The machine's load: on a shared machine it decides how far wall-clock figures can be trusted. */
const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' / ');

console.log(`Node.js ${process.version} (V8 ${process.versions.v8}), ${process.execPath}`);
console.log(`workload: ${workload}`);
console.log(`N = ${n} items per run, ${runs} runs per side, alternating reference / package, each a fresh process; medians`);
console.log(`load average (1 / 5 / 15 min) before: ${loadAverage()}`);
console.log('');
console.log('config          reference  package   ratio  pairwise (min–max) | CPU ns/item: reference  package  ratio  pairwise (min–max)');
const ratios = [];
const cpuRatios = [];
/* The main thread's lines, printed after the table above. */
const mainLines = [];
for (const config of configs) {
  const ref = [];
  const pkg = [];
  for (let r = 0; r < runs; r += 1) {
    // Take turns going first, so drift in the machine's load hits both sides alike.
    if (r % 2 === 0) {
      ref.push(once('reference', config));
      pkg.push(once(pkgDir, config));
    } else {
      pkg.push(once(pkgDir, config));
      ref.push(once('reference', config));
    }
  }
  const ratio = median(pkg.map((p) => p.ips)) / median(ref.map((p) => p.ips));
  const pairs = pkg.map((p, i) => p.ips / ref[i].ips);
  const refCpu = median(ref.map((p) => p.cpuNs));
  const pkgCpu = median(pkg.map((p) => p.cpuNs));
  const cpuPairs = pkg.map((p, i) => ref[i].cpuNs / p.cpuNs);
  ratios.push(ratio);
  cpuRatios.push(refCpu / pkgCpu);
  const refMain = median(ref.map((p) => p.mainNs));
  const pkgMain = median(pkg.map((p) => p.mainNs));
  if (Number.isFinite(refMain) && Number.isFinite(pkgMain)) {
    const mainPairs = pkg.map((p, i) => ref[i].mainNs / p.mainNs);
    mainLines.push(`${config.label.padEnd(14)} ${pad(Math.round(refMain), 9)} ${pad(Math.round(pkgMain), 8)}   ${(refMain / pkgMain).toFixed(2)}   ${spread(mainPairs)}`);
  }
  console.log(
    `${config.label.padEnd(14)} ${pad(Math.round(median(ref.map((p) => p.ips))), 9)} ${pad(Math.round(median(pkg.map((p) => p.ips))), 8)}   ${ratio.toFixed(2)}   ${spread(pairs)}   |             ${pad(Math.round(refCpu), 6)}   ${pad(Math.round(pkgCpu), 6)}   ${(refCpu / pkgCpu).toFixed(2)}   ${spread(cpuPairs)}`,
  );
}
console.log(`lowest ratio: items/s ${Math.min(...ratios).toFixed(2)}, CPU time ${Math.min(...cpuRatios).toFixed(2)} (target ≥ 1.10)`);
if (mainLines.length > 0) {
  console.log('');
  console.log('main thread CPU ns/item (the runner\'s own thread, GC helpers left out: what bounds items/s on an idle machine)');
  console.log('config          reference  package   ratio  pairwise (min–max)');
  for (const line of mainLines) console.log(line);
}
console.log(`load average (1 / 5 / 15 min) after: ${loadAverage()}`);

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
  console.log(`${config.label.padEnd(14)} ${(total / items).toFixed(4)} per item  (${detail})`);
}

// Memory: the heap per item in flight at concurrency 64, each side in a fresh process.
function heap(impl) {
  const run = spawnSync(process.execPath, ['--expose-gc', self, '--heap-probe', impl], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`heap probe of ${impl} failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1));
}
console.log('');
console.log('heap per item in flight at concurrency 64 (16 runners × 64 waiting performs; median of 3 processes each)');
const heaps = { reference: [], package: [] };
for (let r = 0; r < 3; r += 1) {
  heaps.reference.push(heap(reference));
  heaps.package.push(heap(pkgDir));
}
for (const [side, list] of Object.entries(heaps)) {
  const js = median(list.map((h) => h.heapPerItem));
  const buffers = median(list.map((h) => h.buffersPerItem));
  console.log(`${side.padEnd(10)} ${pad(Math.round(js), 6)} bytes of JS heap, ${pad(Math.round(buffers), 6)} bytes of ArrayBuffers (the package's wasm memory)`);
}
