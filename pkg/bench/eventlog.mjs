// Event log appends from Node.js next to raw writes of the same bytes, on the same file
// system, in the same run.
//
//   node bench/eventlog.mjs [DIR] [--seconds N]      (after scripts/build-pkg.sh)
//
// DIR defaults to target/eventlog-bench-node (the project's file system; /tmp may be a
// RAM disk). For appends of 1, 64 and 1,024 drafts (each append with a watermark),
// prints appends/s of the log and of raw fs.writeSync + fs.fdatasyncSync of the frame the
// log writes for such an append (its very bytes, one write and one sync each, as the log
// does), and their ratio (target: at least 0.80). The log's appends run as a pump's do: the
// next append is queued (its drafts checked and serialised) while the one before syncs.
// Also printed: the ratio to raw writes synced by the asynchronous fs.fdatasync, as the
// log syncs (the event loop free meanwhile), and with each append awaited before the next
// is made. Figures are taken in interleaved 100 ms slices and ratios are medians over
// rounds, as a shared disk's fsync rate drifts.
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { EventLog } from 'leasehold/eventlog';

const fdatasync = promisify(fs.fdatasync);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let dir = path.join(root, 'target', 'eventlog-bench-node');
let seconds = 3;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--seconds') seconds = Number(args[++i]);
  else if (args[i].startsWith('-')) throw new Error(`unknown option ${args[i]}`);
  else dir = args[i];
}
fs.mkdirSync(dir, { recursive: true });
const slice = 100;
const rounds = Math.max(1, Math.ceil((seconds * 1000) / slice));
console.log(`event log benchmark (Node.js ${process.version}) in ${dir} (${seconds} s per figure, interleaved)`);

const draft = (i) => ({ source: 'jobs.mailer', at: 1_717_000_000_000 + i, type: 'performed', identity: { request: `r-${i}` }, body: { item: i, durationMs: 38 } });

class Raw {
  constructor(file, frame) {
    fs.rmSync(file, { force: true });
    // Opened for appends, as the log's file is (and as the native benchmark's raw file).
    this.fd = fs.openSync(file, 'a');
    this.file = file;
    this.frame = frame;
  }
  /* Writes and syncs the frame for `ms`; answers writes per ms. */
  run(ms) {
    const start = performance.now();
    let n = 0;
    while (performance.now() - start < ms) {
      fs.writeSync(this.fd, this.frame);
      fs.fdatasyncSync(this.fd);
      n++;
    }
    return n / (performance.now() - start);
  }
  /* The same, synced by the asynchronous fs.fdatasync. */
  async runAsync(ms) {
    const start = performance.now();
    let n = 0;
    while (performance.now() - start < ms) {
      fs.writeSync(this.fd, this.frame);
      await fdatasync(this.fd);
      n++;
    }
    return n / (performance.now() - start);
  }
}

class LogBench {
  static async open(file, chunk) {
    for (const f of [file, `${file}.lock`]) fs.rmSync(f, { force: true });
    const b = new LogBench();
    b.chunk = chunk;
    b.drafts = Array.from({ length: chunk }, (_, i) => draft(i));
    b.log = (await EventLog.open(file, { onNotice() {} })).log;
    b.mark = 0;
    await b.append();
    const before = b.log.byteLength;
    await b.append(); // a frame as every append writes it, for the raw writes
    b.frame = fs.readFileSync(file).subarray(before);
    return b;
  }
  append() {
    this.mark += this.chunk;
    return this.log.append(this.drafts, { 'jobs.mailer': this.mark });
  }
  /* Appends for `ms`, one queued behind the one syncing; answers appends per ms. */
  async run(ms) {
    const start = performance.now();
    let n = 0;
    let last = this.append();
    while (performance.now() - start < ms) {
      const next = this.append();
      await last;
      last = next;
      n++;
    }
    await last;
    n++;
    return n / (performance.now() - start);
  }
  /* Appends for `ms`, each awaited before the next is serialised. */
  async runSerial(ms) {
    const start = performance.now();
    let n = 0;
    while (performance.now() - start < ms) {
      await this.append();
      n++;
    }
    return n / (performance.now() - start);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const benches = [];
for (const chunk of [1, 64, 1024]) {
  const log = await LogBench.open(path.join(dir, `log-${chunk}.log`), chunk);
  const raw = new Raw(path.join(dir, `raw-${chunk}.bin`), log.frame);
  const rawAsync = new Raw(path.join(dir, `raw-async-${chunk}.bin`), log.frame);
  benches.push({ chunk, log, raw, rawAsync, ratios: [], asyncRatios: [], serial: [], logRates: [], rawRates: [] });
}
for (let r = 0; r < rounds; r++) {
  for (const b of benches) {
    // In turn first and last, so neither side always follows the other.
    let raw = r % 2 === 0 ? b.raw.run(slice) : undefined;
    let rawAsync = r % 2 === 0 ? await b.rawAsync.runAsync(slice) : undefined;
    const log = await b.log.run(slice);
    const serial = await b.log.runSerial(slice / 2);
    rawAsync ??= await b.rawAsync.runAsync(slice);
    raw ??= b.raw.run(slice);
    b.rawRates.push(raw * 1000);
    b.logRates.push(log * 1000);
    b.ratios.push(log / raw);
    b.asyncRatios.push(log / rawAsync);
    b.serial.push(serial / raw);
  }
}
for (const b of benches) {
  console.log(
    `chunks of ${String(b.chunk).padStart(4)} (${b.log.frame.length} bytes a frame): ` +
      `log ${median(b.logRates).toFixed(0)} appends/s (${(median(b.logRates) * b.chunk).toFixed(0)} events/s), ` +
      `raw write+fdatasyncSync ${median(b.rawRates).toFixed(0)}/s: ratio ${median(b.ratios).toFixed(2)} ` +
      `(to raw with async fdatasync: ${median(b.asyncRatios).toFixed(2)}; each append awaited before the next is made: ${median(b.serial).toFixed(2)})`,
  );
  await b.log.log.close();
  fs.closeSync(b.raw.fd);
  fs.closeSync(b.rawAsync.fd);
}
// Hundreds of MB by now: gone, with whatever else the log left beside itself.
for (const b of benches) {
  for (const file of [b.log.log.path, `${b.log.log.path}.lock`, b.raw.file, b.rawAsync.file]) fs.rmSync(file, { force: true });
}
console.log('target: every ratio at least 0.80');
