// leasehold/indexeddb and leasehold/otel as a strict TypeScript ES module uses them together.
import { trace } from '@opentelemetry/api';
import { connect, QueueError, type JobRecord, type QueueCounts, type Working } from 'leasehold/indexeddb';
import { jobEventSpans } from 'leasehold/otel';
import type { JobEvent } from 'leasehold';

interface Mail { readonly to: string }

export async function outbox(): Promise<[QueueCounts[], JobRecord | null]> {
  const queue = await connect({ name: 'app', durability: 'strict' });
  const { id } = await queue.enqueue('mail', { to: 'a@example.com' } satisfies Mail, { priority: -1, runAt: new Date() });
  // `work`'s onEvent is the runner's: the OpenTelemetry sink and a typed sink of one's own fit it.
  const spans = jobEventSpans({ tracer: trace.getTracer('app') });
  const working: Working = queue.work<Mail>('mail', async (mail, { signal, job }) => {
    signal.throwIfAborted();
    return { to: mail.to, token: job.token };
  }, { concurrency: 2, onEvent: (event: JobEvent) => { spans(event); if (event.type === 'claim-lost') void event.lapsed; } });
  queue.work('mail', () => undefined, { onEvent: spans });
  // @ts-expect-error misspelt option
  queue.work('mail', () => undefined, { staleAfterMS: 1000 });
  // @ts-expect-error durability is one of its values
  await connect({ name: 'x', durability: 'fast' });
  // @ts-expect-error jobEventSpans takes a tracer and a destination only
  jobEventSpans({ tracer: trace.getTracer('app'), Destination: 'mail' });
  await working.dispose();
  try {
    await queue.cancel([id]);
  } catch (error) {
    if (error instanceof QueueError && error.code === 'UNKNOWN_JOB') throw error;
  }
  const record = await queue.job(id);
  if (record !== null) {
    // What job(id) answers beside the shared fields.
    const extra: [string | null | undefined, number | null | undefined, number | undefined, number | null | undefined] = [
      record.idempotencyKey,
      record.timeoutMs,
      record.token,
      record.finishedAt,
    ];
    void extra;
    void record.cancellation?.reason;
    void record.lease?.expiresAt;
    void record.createdAt;
  }
  return [await queue.counts(), record];
}
