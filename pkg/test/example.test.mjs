// The README's example, run for real: examples/postgres-queue.mjs works a PostgreSQL queue,
// reclaims a job whose lease went stale, and shuts down cleanly on SIGTERM. Runs where
// LEASEHOLD_TEST_PG_URL names a database (scripts/test.sh starts a throwaway cluster).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const example = path.join(pkg, 'examples', 'postgres-queue.mjs');
const url = process.env.LEASEHOLD_TEST_PG_URL;
let pg;
try {
  pg = createRequire(import.meta.url)('pg');
} catch {
  pg = undefined;
}
const skip = !url ? 'LEASEHOLD_TEST_PG_URL is not set: PostgreSQL example test skipped'
  : !pg ? 'pg is not installed in pkg/node_modules: PostgreSQL example test skipped' : false;

test('the README shows the example file as it is', () => {
  const readme = readFileSync(path.join(pkg, 'README.md'), 'utf8');
  const code = readFileSync(example, 'utf8').trim();
  assert.ok(readme.includes(code), 'README.md must contain examples/postgres-queue.mjs verbatim');
});

test('the PostgreSQL example works the queue, reclaims a stale lease and stops on SIGTERM', { skip, timeout: 120_000 }, async (t) => {
  const schema = 'leasehold_pkg_example';
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  t.after(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  const scoped = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;

  const child = spawn(process.execPath, [example], { env: { ...process.env, DATABASE_URL: scoped }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  child.stderr.on('data', (chunk) => { out += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.after(() => child.kill('SIGKILL'));
  const waitFor = async (check, what, ms = 60_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitFor(() => out.includes('jobs.digest: working'), 'the worker to start');

  const texts = Array.from({ length: 20 }, (_, i) => `text ${i}`);
  await admin.query(`INSERT INTO ${schema}.jobs (payload) SELECT jsonb_build_object('text', t) FROM unnest($1::text[]) AS t`, [texts]);
  // A job a dead worker held: its lease (token 7) went stale a minute ago.
  await admin.query(`INSERT INTO ${schema}.jobs (payload, lease_token, leased_until, attempts)
                     VALUES ('{"text": "orphan"}', 7, now() - interval '1 minute', 1)`);
  await admin.query('NOTIFY jobs_queued');
  await waitFor(async () => {
    const { rows } = await admin.query(`SELECT count(*)::int AS left FROM ${schema}.jobs WHERE state <> 'done'`);
    return rows[0].left === 0;
  }, 'every job to be done');

  const { rows } = await admin.query(`SELECT payload->>'text' AS text, lease_token, attempts, result FROM ${schema}.jobs ORDER BY id`);
  assert.equal(rows.length, 21);
  for (const row of rows) {
    assert.equal(row.result, createHash('sha256').update(row.text).digest('hex'), row.text);
  }
  const orphan = rows.find((r) => r.text === 'orphan');
  assert.deepEqual([Number(orphan.lease_token), orphan.attempts], [8, 2], 'reclaimed under a new fencing token');
  assert.ok(rows.filter((r) => r.text !== 'orphan').every((r) => Number(r.lease_token) === 1 && r.attempts === 1));

  child.kill('SIGTERM');
  const { code } = await exited;
  assert.equal(code, 0, out);
  assert.match(out, /jobs\.digest: stopped/);
});
