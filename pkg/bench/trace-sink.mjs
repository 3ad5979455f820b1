// The trace sink's cost per runner event: feeds a sink the events of passes of 10 performed
// items (pass-start, claimed and performed per item, pass-end), as a runner hands them to
// onEvent, and prints ns per event (median and best of R runs) and the events/s of the median.
//
//   node bench/trace-sink.mjs [--runs R] [--passes P]
//
// Build the package first (scripts/build-pkg.sh). A benchmark, not a test: figures only.
import { createRequire } from 'node:module';

const { createJobTraceSink } = createRequire(import.meta.url)('..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const runs = arg('--runs', 7);
const passes = arg('--passes', 20_000);
const report = { claimed: 10, performed: 10, failed: 0, claimLost: 0 };

function run() {
  const sink = createJobTraceSink({ capacity: 100 });
  let events = 0;
  const start = process.hrtime.bigint();
  for (let pass = 0; pass < passes; pass += 1) {
    const at = pass * 100;
    sink({ type: 'pass-start', name: 'bench', at });
    for (let item = 0; item < 10; item += 1) {
      sink({ type: 'claimed', name: 'bench', at: at + item, item });
      sink({ type: 'performed', name: 'bench', at: at + item + 1, item, durationMs: 1 });
    }
    sink({ type: 'pass-end', name: 'bench', at: at + 20, report, nextDelayMs: 1 });
    events += 22;
  }
  const ns = Number(process.hrtime.bigint() - start) / events;
  sink.dispose();
  return ns;
}

const figures = Array.from({ length: runs }, run).sort((a, b) => a - b);
const median = figures[Math.floor(runs / 2)];
console.log(`trace sink: ${median.toFixed(0)} ns/event median, ${figures[0].toFixed(0)} best, ` +
  `${Math.round(1e9 / median).toLocaleString('en')} events/s (${runs} runs of ${passes} passes × 22 events)`);
