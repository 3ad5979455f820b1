// An offline outbox for a web app: POSTs are queued in the browser's IndexedDB at once, sent
// while the browser is online, held while it is offline, and sent when it is back, by
// whichever tab of the app is open. Every tab runs `startOutbox()`; the queue is shared.
//
//   import { startOutbox } from './offline-outbox.mjs';
//   const outbox = await startOutbox();
//   await outbox.post('/api/notes', { text: 'written on a train' }); // queued durably
//
// One tab sends each request at a time: a tab claims a job under a lease that its heartbeats
// renew; a tab that is closed or frozen mid-request stops renewing, and once its lease is
// stale another tab takes the job over and sends it again. A request that may have reached
// the server before its tab went away is sent again, so each job carries an idempotency key
// for the server to drop repeats; and a stale tab's late answer is refused by the job's fence,
// so it changes nothing.
import { connect } from 'leasehold/indexeddb';

const QUEUE = 'post';

/** Opens the outbox `name` and works it in this tab until `stop()`. */
export async function startOutbox(name = 'outbox') {
  const outbox = await connect({ name });

  // Offline: claims stop (the pause is in the database, for every tab); queued requests wait
  // instead of spending attempts. Online: they go out. A request that fails anyway (a network
  // error, a 5xx) is retried with backoff, 1 s doubling up to 1 h, 50 times, then dead-lettered.
  const online = () => outbox.resume(QUEUE);
  const offline = () => outbox.pause(QUEUE);
  addEventListener('online', online);
  addEventListener('offline', offline);
  await (navigator.onLine ? online() : offline());

  const working = outbox.work(QUEUE, async ({ url, body, key }, { signal }) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal, // aborted if this tab's claim is lost or the job is cancelled
    });
    if (response.status >= 500) throw new Error(`${url} answered ${response.status}`);
    return { status: response.status };
  }, { concurrency: 4, staleAfterMs: 15_000 });

  return {
    /** Queues a POST of `body` (JSON data) to `url`; answers the job's id once it is stored. */
    async post(url, body) {
      const { id } = await outbox.enqueue(QUEUE, { url, body, key: crypto.randomUUID() }, { maxAttempts: 50 });
      return id;
    },
    /** What is waiting, sent, dead. */
    counts: () => outbox.counts(),
    async stop() {
      removeEventListener('online', online);
      removeEventListener('offline', offline);
      await working.dispose();
      await outbox.close();
    },
  };
}
