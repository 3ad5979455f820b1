// The `logger` option: a function answering the logger at each line (the reference
// runner's form), or the logger object itself (`console`, pino, winston...).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, base } from './helpers.mjs';

const failing = { claim: async () => ({ id: 1 }), perform: async () => { throw new Error('boom'); }, batchLimit: 1 };

/** An object logger keeping its lines, with `this` checked as a method call would have it. */
function objectLogger() {
  const lines = [];
  const logger = {
    lines,
    error(message, meta) {
      assert.equal(this, logger, 'called as a method of the logger');
      lines.push({ message, meta });
    },
  };
  return logger;
}

test('a logger object gets the error lines through its error method', async () => {
  const logger = objectLogger();
  const runner = createJobRunner(base({ ...failing, name: 'obj', logger }));
  const report = await runner.tick();
  await runner.dispose();
  assert.equal(report.failed, 1);
  assert.equal(logger.lines.length, 1);
  assert.equal(logger.lines[0].message, 'obj work failed');
  assert.equal(logger.lines[0].meta.module, 'obj');
  assert.equal(logger.lines[0].meta.err.message, 'boom');
});

test('console is taken as the logger', async (t) => {
  const error = t.mock.method(console, 'error', () => {});
  const runner = createJobRunner(base({ ...failing, name: 'con', logger: console }));
  await runner.tick();
  await runner.dispose();
  assert.equal(error.mock.callCount(), 1);
  assert.equal(error.mock.calls[0].arguments[0], 'con work failed');
});

test('a logger function is asked for the logger at each line', async () => {
  const first = objectLogger();
  const second = objectLogger();
  let asked = 0;
  const runner = createJobRunner(base({ ...failing, batchLimit: 2, name: 'fn', logger: () => (++asked === 1 ? first : second) }));
  await runner.tick();
  await runner.dispose();
  assert.equal(asked, 2);
  assert.equal(first.lines.length, 1);
  assert.equal(second.lines.length, 1);
});

test('a logger object without an error method is a TypeError naming logger.error', () => {
  assert.throws(() => createJobRunner(base({ ...failing, logger: { warn() {} } })), (e) => {
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /logger\.error must be a function, got undefined/);
    return true;
  });
  assert.throws(() => createJobRunner(base({ ...failing, logger: 'console' })), /logger must be a logger object \(with an error method\) or a function answering one, got string/);
});
