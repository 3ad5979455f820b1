// An event log fed by a pump: a journal (here an array) is derived into events, logged
// with its watermark in the same fdatasync; a reader resumes by sequence number.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EventPump, readEventLog } from 'leasehold/eventlog';

const file = path.join(process.argv[2] ?? mkdtempSync(path.join(tmpdir(), 'events-')), 'events.log');
const orders = []; // your durable journal: entries are only ever appended
const source = {
  committedLength: () => orders.length,
  derive: (index) => [{ type: 'order-placed', body: { order: orders[index] } }],
  identity: () => ({ shop: 'north' }),
};

const pump = await EventPump.open({ path: file, sources: { orders: source } });
orders.push({ id: 1, total: 30 }, { id: 2, total: 12 });
pump.kick('orders'); // derived 50 ms later, with other kicks
await pump.flush(); // or wait: flush derives now, and rejects if it could not be logged
const { records, next } = readEventLog(file, 0);
for (const { seq, event } of records) console.log(seq, event.type, event.body.order.id);
await pump.close(); // derives what is left and records the watermarks
console.log(`resume a reader at ${next}; the log is ${file}`);
