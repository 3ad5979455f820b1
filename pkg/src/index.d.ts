// ---------------------------------------------------------------------------
// The package's types are this file after job-runner.d.ts (the runner, its options and
// events), job-trace.d.ts (the trace ring) and run-lease.d.ts (run leases), joined into one
// declaration file by scripts/build-pkg.sh. Here: the default export (ES modules only) and
// loading the WebAssembly modules.
// ---------------------------------------------------------------------------

// <esm-only> (scripts/build-pkg.sh drops this block from the CommonJS view, index.d.ts)
declare const leasehold: {
  createJobRunner: typeof createJobRunner;
  jobBackoff: typeof jobBackoff;
  DEFAULT_JOB_BATCH_LIMIT: typeof DEFAULT_JOB_BATCH_LIMIT;
  JOB_CLAIM_LOST: typeof JOB_CLAIM_LOST;
  JobClaimLostError: typeof JobClaimLostError;
  heartbeatLoop: typeof heartbeatLoop;
  runSupervised: typeof runSupervised;
  leaseLiveness: typeof leaseLiveness;
  sameHostIncarnation: typeof sameHostIncarnation;
  leasePolicy: typeof leasePolicy;
  LEASE_LOST: typeof LEASE_LOST;
  LeaseLostError: typeof LeaseLostError;
  createJobTraceSink: typeof createJobTraceSink;
  resumeJobTrace: typeof resumeJobTrace;
  init: typeof init;
  initSync: typeof initSync;
  initTrace: typeof initTrace;
};
export default leasehold;
// </esm-only>

// ---------------------------------------------------------------------------
// Loading the WebAssembly modules.
// ---------------------------------------------------------------------------

/**
 * Where a WebAssembly module can come from: a URL (or its string) to fetch, a `Response`
 * (e.g. from your own `fetch`), the module's bytes, or a compiled `WebAssembly.Module`
 * (e.g. posted to a worker).
 */
export type WasmSource = string | GlobalInstance<'URL'> | GlobalInstance<'Request'> | GlobalInstance<'Response'> | WasmBytes | WasmModule;

/** The bytes of a `.wasm` file. */
export type WasmBytes = ArrayBuffer | ArrayBufferView;

/**
 * `WebAssembly.Module` where the program's types declare it (the `dom` lib, or a runtime's
 * own), so that these declarations also compile for a Node.js program typed without `dom`.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** The instance type of a global class (`URL`, `Request`, `Response`) where the program's types declare it. */
type GlobalInstance<Name extends string> = typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : never;

/**
 * Loads the runner's WebAssembly module (`leasehold_bg.wasm`, about 48 KiB gzipped). In
 * browsers, workers and other non-Node.js runtimes every function of this package but the
 * error classes and codes throws an `Error` until it has resolved. Without `input`, the
 * `.wasm` beside the package's `dist/browser.mjs` is fetched (bundlers that follow
 * `new URL(…, import.meta.url)` emit it); with one, that source. Calling it again does
 * nothing more. In Node.js the module was compiled when the package loaded: it resolves
 * at once.
 * @throws (rejects) what fetching or compiling the module throws; `init` can then be called again.
 *   Without `input`, an `Error` that says where the file was looked for and to give its URL,
 *   with the loader's error as `cause` (a bundler that does not emit the `.wasm`: esbuild, an iife).
 */
export declare function init(input?: WasmSource | Promise<WasmSource>): Promise<void>;

/**
 * Loads the runner's module synchronously from its bytes or a compiled `WebAssembly.Module`
 * (browsers allow synchronous compilation of small modules only off the main thread:
 * prefer `init` there). Does nothing in Node.js or once loaded.
 * @throws TypeError when `module` is missing; what `WebAssembly.Module` throws for bad bytes.
 */
export declare function initSync(module: WasmBytes | WasmModule): void;

/**
 * Loads the trace ring's module (`leasehold_trace_bg.wasm`, about 52 KiB gzipped), which
 * {@link createJobTraceSink} and {@link resumeJobTrace} need; `input` as for {@link init}.
 * Outside Node.js they throw an `Error` until it has resolved; a page that never calls it
 * never fetches that module. In Node.js the module is loaded by the first trace sink and
 * this resolves at once.
 */
export declare function initTrace(input?: WasmSource | Promise<WasmSource>): Promise<void>;
