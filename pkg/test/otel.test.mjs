// leasehold/otel: a runner's trace events as OpenTelemetry spans (messaging semantic
// conventions), recorded by the OpenTelemetry SDK into an in-memory exporter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { jobEventSpans, LEASE_LOST } from 'leasehold/otel';
import { createJobRunner, base } from './helpers.mjs';

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('leasehold-test') };
}

const ms = ([s, ns]) => s * 1000 + ns / 1e6;

test('a pass is a receive span and each item a process span linked to it', async () => {
  const { exporter, tracer } = tracing();
  let clock = 1_700_000_000_000;
  let next = 0;
  const runner = createJobRunner(base({
    name: 'mail.send', now: () => clock,
    claim: async () => (next < 3 ? { id: next++ } : null),
    perform: async (item) => {
      clock += 10;
      if (item.id === 1) throw Object.assign(new Error('smtp down'), { code: 'ESMTP' });
    },
    onEvent: jobEventSpans({ tracer }),
  }));
  await runner.tick();
  await runner.dispose();

  const spans = exporter.getFinishedSpans();
  const receive = spans.find((s) => s.name === 'receive mail.send');
  const process = spans.filter((s) => s.name === 'process mail.send');
  assert.ok(receive, spans.map((s) => s.name).join());
  assert.equal(receive.kind, SpanKind.CLIENT);
  assert.deepEqual(
    {
      system: receive.attributes['messaging.system'],
      op: receive.attributes['messaging.operation.type'],
      dest: receive.attributes['messaging.destination.name'],
      batch: receive.attributes['messaging.batch.message_count'],
    },
    { system: 'leasehold', op: 'receive', dest: 'mail.send', batch: 3 },
  );
  assert.equal(process.length, 3);
  for (const span of process) {
    assert.equal(span.kind, SpanKind.CONSUMER);
    assert.equal(span.attributes['messaging.operation.type'], 'process');
    assert.equal(span.attributes['messaging.system'], 'leasehold');
    assert.deepEqual(span.links.map((l) => l.context.spanId), [receive.spanContext().spanId], 'linked to its pass');
    assert.ok(ms(span.endTime) >= ms(span.startTime));
  }
  const failed = process.find((s) => s.attributes['leasehold.item'] === 1);
  assert.equal(failed.status.code, SpanStatusCode.ERROR);
  assert.equal(failed.status.message, 'smtp down');
  assert.equal(failed.attributes['error.type'], 'ESMTP');
  assert.equal(process.filter((s) => s.status.code === SpanStatusCode.ERROR).length, 1);
  assert.equal(ms(receive.startTime), 1_700_000_000_000, "the span's times are the runner's clock");
});

test("one sink with a destination serves a queue's slots: one destination, each item linked to its slot's pass", async () => {
  // A job queue's work runs a runner per slot (PostgreSQL, PGlite: QUEUE#SLOT) and hands them
  // all its onEvent; the README has it given the queue as destination.
  const { exporter, tracer } = tracing();
  const onEvent = jobEventSpans({ tracer, destination: 'mail' });
  let next = 0;
  const claim = async () => (next < 4 ? { id: next++ } : null);
  const perform = () => new Promise((resolve) => setTimeout(resolve, 5));
  const slots = ['mail#1', 'mail#2'].map((name) => createJobRunner(base({ name, claim, perform, onEvent })));
  await Promise.all(slots.map((runner) => runner.tick()));
  await Promise.all(slots.map((runner) => runner.dispose()));
  const spans = exporter.getFinishedSpans();
  assert.deepEqual([...new Set(spans.map((s) => s.name))].sort(), ['process mail', 'receive mail']);
  assert.deepEqual([...new Set(spans.map((s) => s.attributes['messaging.destination.name']))], ['mail']);
  const receives = spans.filter((s) => s.name === 'receive mail');
  assert.equal(receives.length, 2, 'a pass per slot');
  const processes = spans.filter((s) => s.name === 'process mail');
  assert.equal(processes.length, 4);
  const ids = new Set(receives.map((r) => r.spanContext().spanId));
  for (const span of processes) assert.ok(ids.has(span.links[0].context.spanId), "linked to a slot's pass");
  const counted = receives.map((r) => r.attributes['messaging.batch.message_count']);
  assert.equal(counted[0] + counted[1], 4);
});

test('a lost claim is a lease_lost event on its process span, which ends with the pass', async () => {
  const { exporter, tracer } = tracing();
  const sink = jobEventSpans({ tracer, destination: 'mail' });
  const name = 'mail.send';
  sink({ type: 'pass-start', name, at: 1000 });
  sink({ type: 'claimed', name, at: 1001, item: 0 });
  sink({ type: 'claim-lost', name, at: 1500, item: 0, lapsed: true, unconfirmedMs: 2500 });
  sink({ type: 'pass-end', name, at: 2000, report: { claimed: 1, performed: 0, failed: 0, claimLost: 1 }, nextDelayMs: 1000 });
  const [process, receive] = exporter.getFinishedSpans();
  assert.equal(process.name, 'process mail');
  assert.equal(receive.attributes['messaging.destination.name'], 'mail');
  assert.deepEqual(process.events.map((e) => [e.name, e.attributes['error.type'], e.attributes['leasehold.lapsed']]), [
    ['lease_lost', LEASE_LOST, true],
  ]);
  assert.equal(process.attributes['error.type'], 'lease_lost');
  assert.equal(process.status.code, SpanStatusCode.ERROR);
  assert.equal(ms(process.endTime), 2000, 'dropped after the loss: ends with its pass');
});

test('bad options are refused naming the option', () => {
  assert.throws(() => jobEventSpans(), { name: 'TypeError', message: /options must be an object/ });
  assert.throws(() => jobEventSpans({ tracer: {} }), { name: 'TypeError', message: /options\.tracer must be an OpenTelemetry Tracer/ });
  const { tracer } = tracing();
  assert.throws(() => jobEventSpans({ tracer, destination: 5 }), { name: 'TypeError', message: /options\.destination/ });
});

test('a misspelt or unknown option is refused naming it, not ignored', () => {
  const { tracer } = tracing();
  // `Destination` used to be dropped without a word: the spans then carried the runner's name.
  assert.throws(() => jobEventSpans({ tracer, Destination: 'mail' }), {
    name: 'TypeError', message: /unknown option Destination \(did you mean destination\?\); known: tracer, destination/,
  });
  assert.throws(() => jobEventSpans({ tracer, queue: 'mail' }), { name: 'TypeError', message: /unknown option queue; known/ });
});

test("the README's example makes a runner as written, given a claim and a perform", async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('### As OpenTelemetry spans'));
  const code = section.slice(section.indexOf('```js\n') + 6, section.indexOf('```\n', section.indexOf('```js\n') + 6));
  // Its imports resolved from here (the package's own name resolves to its dist/), run as a module.
  const resolved = code.replace(/from '([^']+)'/g, (_, name) => `from '${import.meta.resolve(name)}'`);
  const setup = 'const claim = async () => null; const perform = async () => {};\n';
  const module = await import(`data:text/javascript,${encodeURIComponent(`${setup}${resolved}\nexport { runner };`)}`);
  assert.equal(module.runner.name, 'mail.send');
  assert.deepEqual(await module.runner.tick(), { claimed: 0, performed: 0, failed: 0, claimLost: 0 });
  await module.runner.dispose();
});
