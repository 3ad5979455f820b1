/* What a browser bundle gets for `leasehold/postgres`, `leasehold/pglite` and
   `leasehold/eventlog` (the `browser` condition of their exports), which run in Node.js only:
   the same names, and calls that refuse saying so (naming, for the queues, the one that does
   run there). Their Node.js modules
   need node:fs, node:child_process and __dirname: webpack and esbuild failed the build
   naming those inside the package, and Vite built a page that threw "__dirname is not
   defined" as it loaded. */
export function nodeOnlyQueue(subpath, why) {
  class LeaseholdSchemaError extends Error {
    constructor(message) {
      super(message);
      this.name = 'LeaseholdSchemaError';
    }
  }
  async function connect() {
    throw new Error(
      `leasehold/${subpath} runs in Node.js only (${why}); in a browser, use leasehold/indexeddb: ` +
        "the same queue API over the origin's IndexedDB",
    );
  }
  return { connect, LeaseholdSchemaError };
}

/** `leasehold/eventlog`'s names: opening a log or a pump, or reading one, says it needs Node.js. */
export function nodeOnlyEventLog() {
  const refuse = () => {
    throw new Error('leasehold/eventlog runs in Node.js only: it writes a file and syncs it with fdatasync');
  };
  class EventLogError extends Error {
    constructor(message, code) {
      super(message);
      this.name = 'EventLogError';
      this.code = code;
    }
  }
  class EventLog {
    constructor() {
      refuse();
    }
    static async open() {
      refuse();
    }
  }
  class EventPump extends EventLog {}
  // The wasm module's numbers, which the Node.js entry reads from it (a test compares them).
  return { EventLog, EventPump, EventLogError, readEventLog: refuse, MAX_CHUNK_SIZE: 1_048_576, DEFAULT_CHUNK_SIZE: 1024 };
}
