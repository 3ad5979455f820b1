'use strict';
/*
 * The trace sink (`createJobTraceSink` and `resumeJobTrace`): a function to
 * pass as a runner's `onEvent` that keeps each pass that claimed something
 * as a span in a bounded ring.
 *
 * Plumbing only: the ring, the spans, option checks, the saved shape and its
 * checks are the wasm `TraceRing` (host-wasm/src/trace.rs, over
 * leasehold-core's trace_ring). What lives here: the sink function, its read
 * methods, the `onSpan` callback, and freeing the ring's wasm memory.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the
 * build script wraps it as an ES module).
 */

/* `load()` answers the trace ring's own module (leasehold_trace.js), built
   apart from the runner's so that its serde code costs only its users: in
   Node.js it is first required (compiled and instantiated) when the first
   sink is made. */
function createTraceApi(load) {
  let wasm;
  const rings = () => (wasm === undefined ? (wasm = load()) : wasm).TraceRing;

  /* The ring's wasm memory is freed by `dispose()`, or, for a sink simply
     dropped, by the FinalizationRegistry wasm-bindgen attaches to every ring
     object once the sink (the only holder of its ring) is collected. */
  function sinkOver(ring, options) {
    const onSpan = options == null ? undefined : options.onSpan ?? undefined;
    let live = ring;

    const readable = () => {
      if (live === undefined) throw new Error('JobTraceSink: the sink was disposed');
      return live;
    };

    function sink(event) {
      if (live === undefined) return;
      let finished;
      try {
        finished = live.record(event);
      } catch {
        /* Not a runner event: ignored. A sink never throws into its runner. */
        return;
      }
      if (finished && onSpan !== undefined) {
        try {
          onSpan(live.latest());
        } catch {
          /* An observer that throws is the observer's defect, not the job's. */
        }
      }
    }

    Object.defineProperties(sink, {
      capacity: { get: () => readable().capacity, enumerable: true },
      dropped: { get: () => readable().dropped, enumerable: true },
      size: { get: () => readable().size, enumerable: true },
      openPasses: { get: () => readable().openPasses, enumerable: true },
    });
    sink.spans = () => readable().spans();
    sink.save = () => readable().save();
    /* `JSON.stringify(sink)` gives the saved ring: toJSON is consulted on functions too. */
    sink.toJSON = () => readable().save();
    sink.dispose = () => {
      if (live === undefined) return;
      const freed = live;
      live = undefined;
      freed.free();
    };
    if (typeof Symbol.dispose === 'symbol') sink[Symbol.dispose] = sink.dispose;
    return sink;
  }

  /** A sink over an empty ring. Throws TypeError/RangeError naming the bad option. */
  function createJobTraceSink(options) {
    return sinkOver(rings().create(options), options);
  }

  /** A sink that goes on from a saved ring (an object or its JSON text). */
  function resumeJobTrace(saved, options) {
    return sinkOver(rings().resume(saved, options), options);
  }

  return { createJobTraceSink, resumeJobTrace };
}

module.exports = { createTraceApi };
