// `leasehold/otel` from an installed package: a pass of the runner recorded as spans by a
// tracer that keeps their names and kinds (what `@opentelemetry/api`'s Tracer is asked).
import { createJobRunner } from 'leasehold';
import { jobEventSpans } from 'leasehold/otel';

const spans = [];
const tracer = {
  startSpan(name, options) {
    const span = { name, kind: options.kind, links: (options.links ?? []).length, ended: false };
    spans.push(span);
    return {
      spanContext: () => ({ traceId: '0'.repeat(31) + '1', spanId: String(spans.length).padStart(16, '0'), traceFlags: 1 }),
      setAttribute() {},
      setStatus() {},
      addEvent() {},
      end() { span.ended = true; },
    };
  },
};
const items = [1, 2];
const runner = createJobRunner({
  name: 'consumer.otel', intervalMs: 1000,
  claim: () => items.shift() ?? null, perform: () => {},
  onEvent: jobEventSpans({ tracer }),
});
await runner.tick();
await runner.dispose();
console.log(JSON.stringify(spans));
