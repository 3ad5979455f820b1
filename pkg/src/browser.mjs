/* The browser (and worker, Deno, edge runtime) entry. Importing it fetches
   nothing and needs no top-level await: `await init()` loads the runner's
   WebAssembly module (from beside this file, or from the URL, Response,
   bytes or compiled WebAssembly.Module given), `initSync(module)` does so
   synchronously from bytes or a compiled module. Until then every function
   that needs the module throws an Error saying to `await init()` first; the
   error classes and codes work at once. The trace ring's module is separate
   and loaded only by `await initTrace()`, so a page that never makes a trace
   sink never fetches it. `leasehold/auto` (auto.mjs) is this module after
   `await init()`. */
import * as timing from './timing.mjs';
import { createApi, JobClaimLostError, JOB_CLAIM_LOST } from './runner.mjs';
import { createLeaseApi, LeaseLostError, LEASE_LOST } from './lease.mjs';
import { createTraceApi } from './trace.mjs';
import * as wasm from './leasehold_web.mjs';

export { JobClaimLostError, JOB_CLAIM_LOST, LeaseLostError, LEASE_LOST };

let api; // the runner and lease API, once the runner's module is instantiated
let traceWasm; // the trace ring's bindings, once `initTrace()` has loaded them

/** Claim attempts one pass may make by default (25): read from the module, so set by `init()`. */
export let DEFAULT_JOB_BATCH_LIMIT;

function loaded(name) {
  if (api === undefined) {
    throw new Error(
      `leasehold: ${name}() needs the WebAssembly module, which is not loaded yet: ` +
        "`await init()` first (or import 'leasehold/auto', which does it on import)",
    );
  }
  return api;
}

function ready() {
  if (api !== undefined) return;
  const made = createApi(wasm, timing);
  Object.assign(made, createLeaseApi(wasm, timing));
  DEFAULT_JOB_BATCH_LIMIT = made.DEFAULT_JOB_BATCH_LIMIT;
  api = made;
}

/* wasm-bindgen's loader takes `{ module_or_path }`; undefined means the .wasm
   beside the glue: new URL('leasehold_bg.wasm', import.meta.url), which
   bundlers that follow `new URL(…, import.meta.url)` emit as an asset. */
const source = (input) => (input === undefined ? undefined : { module_or_path: input });

/* Loads `file` through its glue's loader (`glue`), from `input` or, left out, from beside
   the glue. That default failing to find the file is what a bundler that does not emit the
   .wasm leaves (esbuild: a 404; an iife bundle, whose import.meta.url is empty: "Invalid
   URL"; a server answering its page in place of a missing file: "expected magic word"), so
   the error says where the file was looked for and that its URL can be given. A module
   found but refused (a Content-Security-Policy without 'wasm-unsafe-eval') is the engine's
   own error, which says why. */
async function load(glue, file, call, input) {
  if (input !== undefined) return glue(source(input));
  try {
    return await glue(undefined);
  } catch (error) {
    const refused = error instanceof WebAssembly.CompileError && !/magic word/.test(error.message);
    if (refused || error instanceof WebAssembly.LinkError || error instanceof WebAssembly.RuntimeError) throw error;
    throw new Error(
      `leasehold: ${call}() could not load ${file} from beside the package's dist/browser.mjs ` +
        `(${error?.message ?? error}). Where a bundler does not emit it beside the bundle (esbuild; any ` +
        `iife bundle, whose import.meta.url is empty), give its URL: \`await ${call}(url)\``,
      { cause: error },
    );
  }
}

/**
 * Loads the runner's module. `input`: a URL or string to fetch, a Response, the bytes, a
 * compiled WebAssembly.Module, or a promise of one of these; left out, the .wasm beside
 * this file. Calling it again (or after initSync) does nothing more.
 */
export async function init(input) {
  if (api !== undefined) return;
  await load(wasm.default, 'leasehold_bg.wasm', 'init', await input);
  ready();
}

/** Loads the runner's module synchronously from its bytes or a compiled WebAssembly.Module. */
export function initSync(module) {
  if (api !== undefined) return;
  if (module === undefined) throw new TypeError('initSync(module): give the .wasm bytes or a WebAssembly.Module');
  wasm.initSync({ module });
  ready();
}

/**
 * Loads the trace ring's module (leasehold_trace_bg.wasm), which `createJobTraceSink` and
 * `resumeJobTrace` need; `input` as for `init`. Its glue is imported only now, so bundlers
 * can put it in a chunk of its own.
 */
export async function initTrace(input) {
  if (traceWasm !== undefined) return;
  const [glue, given] = await Promise.all([import('./leasehold_trace_web.mjs'), input]);
  await load(glue.default, 'leasehold_trace_bg.wasm', 'initTrace', given);
  traceWasm = glue;
}

const trace = createTraceApi(() => {
  if (traceWasm === undefined) {
    throw new Error(
      "leasehold: a trace sink needs the trace ring's WebAssembly module, which is not loaded yet: " +
        '`await initTrace()` first',
    );
  }
  return traceWasm;
});

export const createJobRunner = (options) => loaded('createJobRunner').createJobRunner(options);
export const jobBackoff = (intervalMs) => loaded('jobBackoff').jobBackoff(intervalMs);
export const heartbeatLoop = (options) => loaded('heartbeatLoop').heartbeatLoop(options);
export const runSupervised = (work, options) => loaded('runSupervised').runSupervised(work, options);
export const leaseLiveness = (staleAfterMs) => loaded('leaseLiveness').leaseLiveness(staleAfterMs);
export const sameHostIncarnation = (a, b) => loaded('sameHostIncarnation').sameHostIncarnation(a, b);
export const leasePolicy = (policy) => loaded('leasePolicy').leasePolicy(policy);
export const { createJobTraceSink, resumeJobTrace } = trace;

export default {
  createJobRunner, jobBackoff, JOB_CLAIM_LOST, JobClaimLostError,
  heartbeatLoop, runSupervised, leaseLiveness, sameHostIncarnation, leasePolicy, LEASE_LOST, LeaseLostError,
  createJobTraceSink, resumeJobTrace, init, initSync, initTrace,
  get DEFAULT_JOB_BATCH_LIMIT() {
    return DEFAULT_JOB_BATCH_LIMIT;
  },
};
