// CPU time per event log append (process.cpuUsage, user + system) of two builds of the
// package, alternating in one process, so both see the same machine load.
//
//   node bench/eventlog-cpu.mjs BEFORE_DIST AFTER_DIST [DIR]
//
// BEFORE_DIST and AFTER_DIST are `dist/` folders that scripts/build-pkg.sh made (copy one
// aside before rebuilding). DIR (default /dev/shm, a RAM disk where there is one) holds the
// logs: there a sync costs next to nothing, so what is measured is the append's own work.
// Appends of 1, 64 and 1,024 drafts, each awaited; prints the median CPU per append of each
// build and their ratio.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [before, after, where] = process.argv.slice(2);
if (!before || !after) {
  console.error('usage: node bench/eventlog-cpu.mjs BEFORE_DIST AFTER_DIST [DIR]');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const builds = { before: require(path.resolve(before, 'eventlog.cjs')), after: require(path.resolve(after, 'eventlog.cjs')) };
const base = where ?? (fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());
const dir = fs.mkdtempSync(path.join(base, 'leasehold-eventlog-cpu-'));
const draft = (i) => ({ source: 'jobs.mailer', at: 1_717_000_000_000 + i, type: 'performed', identity: { request: `r-${i}` }, body: { item: i, durationMs: 38 } });
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`event log CPU per append, ${before} vs ${after}, in ${dir}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
try {
  for (const chunk of [1, 64, 1024]) {
    const drafts = Array.from({ length: chunk }, (_, i) => draft(i));
    const sides = {};
    for (const [name, api] of Object.entries(builds)) {
      const { log } = await api.EventLog.open(path.join(dir, `${name}-${chunk}.log`), { onNotice() {} });
      sides[name] = { log, mark: 0, cpu: [] };
    }
    const appends = chunk === 1024 ? 20 : 200;
    for (let round = 0; round < 40; round++) {
      // In turn first and second.
      for (const name of round % 2 ? ['before', 'after'] : ['after', 'before']) {
        const side = sides[name];
        const start = process.cpuUsage();
        for (let i = 0; i < appends; i++) {
          side.mark += chunk;
          await side.log.append(drafts, { 'jobs.mailer': side.mark });
        }
        const used = process.cpuUsage(start);
        side.cpu.push((used.user + used.system) / appends);
      }
    }
    const [b, a] = [median(sides.before.cpu), median(sides.after.cpu)];
    console.log(`chunks of ${String(chunk).padStart(4)}: before ${b.toFixed(0)} µs, after ${a.toFixed(0)} µs CPU per append (after/before ${(a / b).toFixed(2)})`);
    for (const side of Object.values(sides)) await side.log.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
