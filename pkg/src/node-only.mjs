/* What a browser bundle gets for `leasehold/postgres` and `leasehold/pglite` (the `browser`
   condition of their exports), which run in Node.js only: the same names, and a `connect`
   that rejects saying so and naming the queue that does run there. Their Node.js modules
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
