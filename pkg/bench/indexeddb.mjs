// The IndexedDB queue's throughput in one headless Chromium tab: N no-op jobs enqueued, then
// worked by one worker until every one has succeeded. A benchmark, not a test: it prints
// figures. Build the package first (scripts/build-pkg.sh).
const HELP = `usage: node bench/indexeddb.mjs [--n N] [--runs R] [--durability D]

--n N      jobs per run (default 5000)
--runs R   runs per configuration (default 3); the median is printed
--durability D  connect with durability D: strict (every commit flushed to disk), relaxed,
           or default (the browser's; the default)

Prints, per configuration (concurrency c, page size p: jobs one claim transaction takes),
the median no-op jobs/s from the first claim to the last settle committed (every job
claimed, performed, and completed under its fence, one transaction per page of claims and
per gathered batch of settles), and the enqueue rate (one transaction per job) beside it.`;

import { launch, missing } from '../test/indexeddb/chromium.mjs';

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : Number(args[i + 1]);
};
const n = option('--n', 5000);
const runs = option('--runs', 3);
const durability = args.includes('--durability') ? args[args.indexOf('--durability') + 1] : undefined;
if (missing) {
  console.log(`SKIP: ${missing}`);
  process.exit(0);
}

const configs = [
  { concurrency: 1, pageSize: 1 },
  { concurrency: 1, pageSize: 25 },
  { concurrency: 8, pageSize: 8 },
  { concurrency: 16, pageSize: 16 },
  { concurrency: 32, pageSize: 32 },
  { concurrency: 64, pageSize: 64 },
  // Pages larger than the concurrency wait, and jobs that waited over 100 ms are renewed
  // before they are handed over: a read and a write each more.
  { concurrency: 32, pageSize: 100 },
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const browser = await launch();
try {
  const page = await browser.tab();
  console.log(`leasehold/indexeddb, headless Chromium ${browser.context.browser()?.version() ?? ''}, one tab, ${n} no-op jobs per run, ${runs} runs, durability ${durability ?? 'default'}`);
  let set = 0;
  for (const config of configs) {
    const rates = [];
    const enqueues = [];
    for (let r = 0; r < runs; r++) {
      const name = `bench-${set++}`;
      const { enqueueRate, rate } = await page.evaluate(async ({ name, n, config, durability }) => {
        const q = await lh.connect({ name, durability });
        let t = performance.now();
        for (let i = 0; i < n; i++) await q.enqueue('noop', i);
        const enqueueRate = n / ((performance.now() - t) / 1000);
        let performed = 0;
        let finish;
        const all = new Promise((resolve) => (finish = resolve));
        t = performance.now();
        const working = q.work('noop', () => {
          performed += 1;
          if (performed === n) finish();
        }, { ...config, pollMs: 1000 });
        await all;
        await working.dispose(); // the last settles committed
        const rate = n / ((performance.now() - t) / 1000);
        const [counts] = await q.counts();
        if (counts.succeeded !== n) throw new Error(`only ${counts.succeeded} of ${n} succeeded`);
        await q.close();
        await new Promise((resolve) => {
          const del = indexedDB.deleteDatabase(`leasehold:${name}`);
          del.onsuccess = del.onerror = resolve;
        });
        return { enqueueRate, rate };
      }, { name, n, config, durability });
      rates.push(rate);
      enqueues.push(enqueueRate);
    }
    console.log(`c${config.concurrency} p${config.pageSize}: ${Math.round(median(rates))} jobs/s (runs: ${rates.map(Math.round).join(', ')}); enqueue ${Math.round(median(enqueues))}/s`);
  }
} finally {
  await browser.close();
}
