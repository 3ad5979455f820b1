// Compiled by types.test.mjs with `tsc --noEmit` (module nodenext): `leasehold/eventlog`.
import { EventLog, EventPump, EventLogError, readEventLog, MAX_CHUNK_SIZE, type EventSource, type LogRead } from 'leasehold/eventlog';

export async function use(path: string): Promise<void> {
  const { log, created, setAside, marks } = await EventLog.open(path, { maxBatch: 64, onNotice: (text: string) => void text });
  const epoch: bigint = log.epoch;
  const head: number = log.head;
  const range: { first: number; end: number } = await log.append([{ source: 'jobs', type: 'done', body: { n: 1 } }], new Map([['jobs', 1]]));
  await log.compact((event, seq) => event.source !== 'old' && seq >= 0, { jobs: 1 });
  const read: LogRead = await log.readFrom(0);
  const first = read.records[0]?.event.type;
  await log.close();
  void [created, setAside, marks, epoch, head, range, first, MAX_CHUNK_SIZE, readEventLog(path).next];

  const source: EventSource = { committedLength: () => 0, derive: (index: number) => [{ type: 'entry', body: index }] };
  const pump = await EventPump.open({ path, sources: { source }, kickDelayMs: 10 });
  pump.kick('source');
  await pump.flush();
  await pump.emit([{ source: 'source', type: 'moved' }]);
  await pump.close();
  try {
    await log.append([]);
  } catch (error) {
    if (error instanceof EventLogError && error.code === 'EVENTLOG_CLOSED') void error.path;
  }
  // @ts-expect-error a draft needs a type
  await log.append([{ source: 'jobs' }]);
  // @ts-expect-error epochs are bigints
  const wrong: number = log.epoch;
  void wrong;
  // @ts-expect-error a log is opened with EventLog.open, not constructed
  void new EventLog(path);
}
