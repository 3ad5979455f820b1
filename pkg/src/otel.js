'use strict';
/* `leasehold/otel`: a runner's trace events as OpenTelemetry spans, following
   the messaging semantic conventions. No runtime dependency: the spans are
   made by the tracer the caller hands in (from `@opentelemetry/api`), and
   kinds and status codes are that API's numeric values. */

/** `SpanKind` and `SpanStatusCode` of `@opentelemetry/api`. Times go to the tracer as
    `Date`s, so an `at` (ms since the epoch) is never read as an offset from the
    process's start, as the SDK reads a small number. */
const CLIENT = 2;
const CONSUMER = 4;
const ERROR = 2;

/** The `error.type` of a lost or lapsed claim. */
const LEASE_LOST = 'lease_lost';

/** The keys `jobEventSpans` takes. */
const OPTIONS = ['tracer', 'destination'];

function errorType(error) {
  if (error && typeof error === 'object') {
    if (typeof error.code === 'string' && error.code) return error.code;
    if (typeof error.name === 'string' && error.name) return error.name;
  }
  return 'Error';
}

function errorMessage(error) {
  return error && typeof error === 'object' && typeof error.message === 'string' ? error.message : String(error);
}

/**
 * An `onEvent` sink that turns each pass into a `receive` span and each
 * claimed item into a `process` span linked to it. See otel.d.ts.
 */
function jobEventSpans(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('jobEventSpans(options): options must be an object with a tracer');
  }
  // An unknown key is refused, as every other options object of the package refuses it: a
  // misspelt `Destination` would otherwise name the spans after the runner without a word.
  for (const key of Object.keys(options)) {
    if (OPTIONS.includes(key)) continue;
    const near = OPTIONS.find((known) => known.toLowerCase() === key.toLowerCase());
    throw new TypeError(`jobEventSpans(options): unknown option ${key}${near ? ` (did you mean ${near}?)` : ''}; known: ${OPTIONS.join(', ')}`);
  }
  const { tracer, destination } = options;
  if (!tracer || typeof tracer.startSpan !== 'function') {
    throw new TypeError('jobEventSpans(options): options.tracer must be an OpenTelemetry Tracer (trace.getTracer(name))');
  }
  if (destination !== undefined && typeof destination !== 'string') {
    throw new TypeError('jobEventSpans(options): options.destination must be a string when given');
  }
  /** Per runner name: the pass's receive span and its items' process spans. */
  const passes = new Map();
  const attributes = (name, operation) => ({
    'messaging.system': 'leasehold',
    'messaging.operation.type': operation,
    'messaging.operation.name': operation,
    'messaging.destination.name': destination ?? name,
  });
  const endItem = (pass, item, at) => {
    const span = pass.items.get(item);
    if (span === undefined) return;
    pass.items.delete(item);
    span.end(new Date(at));
  };

  return function onEvent(event) {
    const name = event.name;
    let pass = passes.get(name);
    switch (event.type) {
      case 'pass-start': {
        const receive = tracer.startSpan(`receive ${destination ?? name}`, {
          kind: CLIENT,
          startTime: new Date(event.at),
          attributes: attributes(name, 'receive'),
        });
        passes.set(name, { receive, items: new Map() });
        return;
      }
      case 'claimed': {
        if (pass === undefined) return;
        const span = tracer.startSpan(`process ${destination ?? name}`, {
          kind: CONSUMER,
          startTime: new Date(event.at),
          attributes: { ...attributes(name, 'process'), 'leasehold.item': event.item },
          links: [{ context: pass.receive.spanContext() }],
        });
        pass.items.set(event.item, span);
        return;
      }
      case 'performed':
        if (pass !== undefined) endItem(pass, event.item, event.at);
        return;
      case 'item-failed': {
        const span = pass?.items.get(event.item);
        if (span === undefined) return;
        span.setAttribute('error.type', errorType(event.error));
        span.setStatus({ code: ERROR, message: errorMessage(event.error) });
        endItem(pass, event.item, event.at);
        return;
      }
      case 'claim-lost': {
        const span = pass?.items.get(event.item);
        if (span === undefined) return;
        span.addEvent(
          'lease_lost',
          { 'error.type': LEASE_LOST, 'leasehold.lapsed': event.lapsed, 'leasehold.unconfirmed_ms': event.unconfirmedMs },
          new Date(event.at),
        );
        span.setAttribute('error.type', LEASE_LOST);
        span.setStatus({ code: ERROR, message: event.lapsed ? 'the lease lapsed' : 'the claim was lost' });
        return;
      }
      case 'claim-failed':
        if (pass === undefined) return;
        pass.receive.setAttribute('error.type', errorType(event.error));
        pass.receive.setStatus({ code: ERROR, message: errorMessage(event.error) });
        return;
      case 'pass-end': {
        if (pass === undefined) return;
        passes.delete(name);
        // Items still open were dropped after a lost claim: they end with the pass.
        for (const item of [...pass.items.keys()]) endItem(pass, item, event.at);
        pass.receive.setAttribute('messaging.batch.message_count', event.report.claimed);
        pass.receive.end(new Date(event.at));
        return;
      }
      default:
        return;
    }
  };
}

module.exports = { jobEventSpans, LEASE_LOST };
