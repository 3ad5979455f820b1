/**
 * `leasehold/otel`: a job runner's trace events as OpenTelemetry spans,
 * following the messaging semantic conventions. Needs `@opentelemetry/api`
 * (an optional peer dependency) for the tracer you hand in; this module
 * itself loads nothing.
 *
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import { createJobRunner } from 'leasehold';
 * import { jobEventSpans } from 'leasehold/otel';
 *
 * const runner = createJobRunner({ name: 'mail.send', claim, perform,
 *   onEvent: jobEventSpans({ tracer: trace.getTracer('my-app') }) });
 * ```
 *
 * Each pass that claims something is a `receive {destination}` span (kind
 * CLIENT, `messaging.operation.type = receive`, and once the pass ends
 * `messaging.batch.message_count` = the items claimed; a claim that raised
 * sets status ERROR with `error.type`). Each claimed item is a
 * `process {destination}` span (kind CONSUMER,
 * `messaging.operation.type = process`, `leasehold.item` = its ordinal in
 * the pass) linked to its pass's receive span, from its claim to its
 * perform's end: status ERROR with `error.type` (the error's `code`, else
 * its `name`) when the perform raised. A lost or lapsed claim adds the
 * event `lease_lost` (`error.type = lease_lost`, `leasehold.lapsed`,
 * `leasehold.unconfirmed_ms`) and sets `error.type = lease_lost`; an item
 * dropped after that ends with its pass. Every span has
 * `messaging.system = leasehold` and `messaging.destination.name` = the
 * runner's name (or `destination`). Times are the events' `at` (your
 * runner's `now()`, ms since the epoch).
 */
import type { Tracer } from '@opentelemetry/api';
import type { JobEvent } from 'leasehold';

/** The `error.type` of a lost or lapsed claim: `'lease_lost'`. */
export declare const LEASE_LOST: 'lease_lost';

/** Options of {@link jobEventSpans}. */
export interface JobEventSpansOptions {
  /** The tracer the spans are made with (`trace.getTracer(name)`). */
  readonly tracer: Tracer;
  /** `messaging.destination.name` and the span names' suffix (default: the runner's name). */
  readonly destination?: string | undefined;
}

/**
 * An `onEvent` sink that records the runner's passes and items as spans
 * (see the module docs). One sink may serve several runners: passes are
 * told apart by the runner's name. Throws a `TypeError` naming the option
 * when `options.tracer` is not a tracer, `destination` not a string, or a key
 * is neither (`unknown option Destination (did you mean destination?)`).
 */
export declare function jobEventSpans(options: JobEventSpansOptions): (event: JobEvent) => void;
