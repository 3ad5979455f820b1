// `leasehold ui` in headless Chromium: the overview shows the queue's counts, a job queued
// meanwhile appears without a reload, the retry and cancel buttons work, the schedules page
// follows a worker's slots, and off loopback a
// wrong or missing token is refused. Saves a screenshot of each page.
//
//   LEASEHOLD_BIN=target/debug/leasehold node --test host-node/tests/ui_browser.test.mjs
//
// playwright-core comes from pkg/node_modules (npm ci in pkg/); Chromium is /usr/bin/chromium.
// Screenshots go to $UI_SCREENSHOTS (default: target/ui-screenshots).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = process.env.LEASEHOLD_BIN || path.join(root, 'target/debug/leasehold');
const chromiumPath = '/usr/bin/chromium';
const shots = process.env.UI_SCREENSHOTS || path.join(root, 'target/ui-screenshots');
const skip = !existsSync(chromiumPath) ? `no Chromium at ${chromiumPath}`
  : !existsSync(bin) ? `no leasehold binary at ${bin} (cargo build -p leasehold --features cli)`
    : !existsSync(path.join(root, 'pkg/node_modules/playwright-core')) ? 'no playwright-core in pkg/node_modules (npm ci in pkg/)'
      : false;

const dir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-ui-'));
const database = `sqlite://${path.join(dir, 'queue.db')}`;

function cli(...args) {
  const run = spawnSync(bin, ['--database', database, ...args], { encoding: 'utf8' });
  assert.equal(run.status, 0, `leasehold ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim();
}

/** Starts `leasehold ui ARGS` and answers its origin once it listens. */
async function serve(t, args) {
  const child = spawn(bin, ['--database', database, 'ui', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => child.kill('SIGINT'));
  let said = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      said += chunk;
      const found = said.match(/is at (http:\/\/\S+?)\/ /);
      if (found) resolve(found[1]);
    });
    child.on('exit', (code) => reject(new Error(`leasehold ui exited ${code}: ${said}`)));
  });
}

function browserArgs() {
  return ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];
}

/** A browser context on a fresh profile folder (playwright passes it as --user-data-dir). */
async function launch(t, viewport) {
  const { chromium } = createRequire(path.join(root, 'pkg/package.json'))('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-ui-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, headless: true, args: browserArgs(), viewport });
  t.after(() => context.close());
  return context;
}

const count = (page, state) => page.locator(`tr[data-queue="mail"] td[data-state="${state}"]`).innerText();

test('the dashboard shows the counts, updates live, and its buttons retry and cancel', { skip, timeout: 180_000 }, async (t) => {
  mkdirSync(shots, { recursive: true });
  for (let i = 1; i <= 3; i++) cli('enqueue', '--queue', 'mail', '--', 'echo', `mail ${i}`);
  const dead = cli('enqueue', '--queue', 'mail', '--max-attempts', '1', '--', 'sh', '-c', 'echo broken >&2; exit 3');
  cli('work', '--queue', 'mail', '--until-empty', '--concurrency', '2');
  cli('enqueue', '--queue', 'mail', '--at', '1h', '--', 'echo', 'later');
  cli('enqueue', '--queue', 'reports', '--', 'echo', 'report');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1360, height: 900 });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  await page.goto(`${origin}/`);
  await page.locator('#live.on').waitFor();
  assert.equal(await count(page, 'succeeded'), '3');
  assert.equal(await count(page, 'dead'), '1');
  assert.equal(await count(page, 'scheduled'), '1');
  assert.equal(await count(page, 'queued'), '0');
  assert.equal(await page.locator('tr[data-queue="reports"] td[data-state="queued"]').innerText(), '1');
  // The worker's row counts the dead-lettered attempt beside the succeeded ones.
  const worker = await page.locator('#workers tbody tr').first().locator('td').allInnerTexts();
  assert.deepEqual(worker.slice(-4), ['4', '3', '0', '1'], `claimed, succeeded, failed, dead: ${worker}`);
  await page.screenshot({ path: path.join(shots, 'overview.png'), fullPage: true });

  // Queued meanwhile, by another process: the count moves without a reload.
  await page.evaluate(() => { window.__sameDocument = true; });
  cli('enqueue', '--queue', 'mail', '--', 'echo', 'meanwhile');
  await page.waitForFunction(() => document.querySelector('tr[data-queue="mail"] td[data-state="queued"]')?.innerText === '1', null, { timeout: 15_000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');

  await page.goto(`${origin}/#/jobs?queue=mail`);
  await page.locator('#jobs tbody tr').first().waitFor();
  assert.equal(await page.locator('#jobs tbody tr').count(), 6);
  // Numbers and their headers line up on the right.
  const aligned = await page.evaluate(() => [...document.querySelectorAll('#jobs thead th')].map((th) => getComputedStyle(th).textAlign));
  assert.deepEqual(aligned.slice(0, 4), ['right', 'left', 'left', 'right']);
  await page.screenshot({ path: path.join(shots, 'jobs.png'), fullPage: true });

  // Retry the dead job from its page, then cancel it.
  await page.goto(`${origin}/#/jobs/${dead}`);
  await page.locator('h1 .pill.dead').waitFor();
  assert.match(await page.locator('#attempts').innerText(), /exit code\s+3/);
  assert.match(await page.locator('#settlements').innerText(), /job-dead-lettered/);
  await page.screenshot({ path: path.join(shots, 'job.png'), fullPage: true });
  await page.locator('button[data-action="retry"]').click();
  await page.locator('#confirm-ok').click();
  await page.locator('h1 .pill.queued').waitFor();
  await page.locator('button[data-action="cancel"]').click();
  await page.locator('#confirm-reason').fill('not today');
  await page.locator('#confirm-ok').click();
  await page.locator('h1 .pill.cancelled').waitFor();
  assert.match(await page.locator("main").innerText(), /cancelled\s+\S.* by .*\(leasehold ui\): not today/);
  assert.match(cli('show', dead), /cancelled: .* by .*\(leasehold ui\): not today/);
  await page.screenshot({ path: path.join(shots, 'job-cancelled.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('the schedules page shows each schedule\'s cadence, pause, next and last run, and follows a worker live', { skip, timeout: 120_000 }, async (t) => {
  mkdirSync(shots, { recursive: true });
  cli('schedule', 'add', 'digest', '--every', '5m', '--queue', 'mail', '--', 'echo', 'digest');
  cli('schedule', 'add', 'nightly', '--cron', '30 2 * * *', '--tz', 'Europe/Berlin', '--no-overlap', '--', './backup.sh', '--full');
  cli('schedule', 'pause', 'nightly');
  cli('schedule', 'add', 'ticks', '--every', '2s', '--queue', 'ticks', '--', 'echo', 'tick');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1280, height: 700 });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${origin}/`);
  await page.locator('nav a[data-nav="schedules"]').click();
  await page.locator('#schedules tbody tr').first().waitFor();
  assert.equal(page.url(), `${origin}/#/schedules`);
  assert.ok(await page.locator('nav a[data-nav="schedules"].on').count(), 'the nav marks the page');
  const row = (name) => page.locator(`tr[data-schedule="${name}"]`);
  const field = (name, f) => row(name).locator(`td[data-field="${f}"]`).innerText();
  assert.deepEqual(await page.locator('#schedules tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.schedule)), ['digest', 'nightly', 'ticks']);
  const digest = await row('digest').locator('td').allInnerTexts();
  assert.equal(digest[1], 'mail');
  assert.equal(digest[2], 'every 5m');
  assert.match(digest[3], /in \d/, `digest's next run is ahead: ${digest}`);
  assert.equal(digest[4], 'never');
  assert.equal(digest[6], 'catch-up one');
  assert.equal(digest[7], 'echo digest');
  assert.equal(await field('nightly', 'when'), '30 2 * * * Europe/Berlin');
  assert.equal(await row('nightly').locator('.pill.paused').count(), 1);
  assert.match(await field('nightly', 'next'), /^paused since /);
  assert.match(await row('nightly').innerText(), /catch-up one\s+no overlap/);

  // A worker of queue ticks enqueues and runs a slot: the page follows without a reload.
  await page.evaluate(() => { window.__sameDocument = true; });
  const worker = spawn(bin, ['--database', database, 'work', '--queue', 'ticks', '--concurrency', '1'], { stdio: 'ignore' });
  t.after(() => worker.kill('SIGKILL'));
  await row('ticks').locator('td[data-field="outcome"] .pill.succeeded').waitFor({ timeout: 30_000 });
  worker.kill('SIGINT');
  await new Promise((resolve) => worker.once('exit', resolve));
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
  assert.match(await field('ticks', 'outcome'), /^job \d+ succeeded$/);
  assert.match(await field('ticks', 'last'), / ago$/);
  // The outcome links to the job.
  await row('ticks').locator('td[data-field="outcome"] a').click();
  await page.locator('main h1 .pill.succeeded').waitFor();
  assert.match(page.url(), /#\/jobs\/\d+$/);

  // Paused meanwhile from the command line: marked without a reload.
  await page.goto(`${origin}/#/schedules`);
  cli('schedule', 'pause', 'digest');
  await row('digest').locator('.pill.paused').waitFor({ timeout: 15_000 });
  assert.match(await field('digest', 'next'), /^paused since /);
  // With its worker gone, the next run of ticks passes: in 10 s it is said to be overdue,
  // though nothing in the queue changed.
  await row('ticks').locator('.warn').waitFor({ timeout: 30_000 });
  assert.match(await field('ticks', 'next'), /ago\s+overdue: no worker of queue ticks is running$/);
  await page.screenshot({ path: path.join(shots, 'schedules.png'), fullPage: true });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the page scrolls sideways');
  assert.ok(await page.locator('#schedules').evaluate((table) => table.parentElement.scrollWidth <= table.parentElement.clientWidth), 'the table is wider than its card');
  cli('schedule', 'remove', 'ticks');
  await row('ticks').waitFor({ state: 'detached', timeout: 15_000 });

  // Resumed with its button (after a question).
  await row('nightly').locator('button[data-action="resume"]').click();
  await page.locator('#confirm-ok').click();
  await row('nightly').locator('.pill.paused').waitFor({ state: 'detached' });
  assert.match(await field('nightly', 'next'), /in \d/);
  assert.doesNotMatch(cli('schedule', 'list'), /nightly[^\n]*paused since/, 'resumed in the database');
  assert.equal(await row('digest').locator('button[data-action="resume"]').count(), 1, 'a paused schedule offers Resume');
  assert.deepEqual(errors, []);
});

test('off loopback the dashboard refuses a missing or wrong token and opens with the right one', { skip, timeout: 120_000 }, async (t) => {
  const env = { ...process.env };
  delete env.LEASEHOLD_UI_TOKEN;
  const refused = spawnSync(bin, ['--database', database, 'ui', '--listen', '0.0.0.0:0'], { encoding: 'utf8', env });
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /--listen 0\.0\.0\.0:0 is not a loopback address.*--token/);

  const origin = await serve(t, ['--listen', '0.0.0.0:0', '--token', 's3cret']);
  const port = new URL(origin).port;
  const browser = await launch(t, { width: 1000, height: 600 });
  const page = await browser.newPage();
  const base = `http://127.0.0.1:${port}`;
  assert.equal((await page.goto(`${base}/`)).status(), 401, 'no token');
  await page.screenshot({ path: path.join(shots, 'token-needed.png') });
  assert.equal((await page.goto(`${base}/?token=wrong`)).status(), 401, 'a wrong token');
  assert.equal((await page.request.get(`${base}/api/overview`)).status(), 401);
  assert.equal((await page.request.get(`${base}/api/overview`, { headers: { Authorization: 'Bearer nope' } })).status(), 401);
  assert.equal((await page.request.get(`${base}/api/overview`, { headers: { Authorization: 'Bearer s3cret' } })).status(), 200);
  // The login: ?token= sets a cookie and leaves the token out of the address.
  await page.goto(`${base}/?token=s3cret`);
  await page.locator('tr[data-queue="mail"]').waitFor();
  assert.ok(!page.url().includes('s3cret'), page.url());
  // A shared link to a page, token and all, opens that page once logged in.
  await browser.clearCookies();
  await page.goto(`${base}/?token=s3cret#/jobs?queue=mail`);
  await page.locator('#jobs').waitFor();
  assert.ok(page.url().endsWith('/#/jobs?queue=mail') && !page.url().includes('s3cret'), page.url());
  // The address's other parameters stay as they were given; only the token leaves it.
  await browser.clearCookies();
  const login = await page.request.get(`${base}/?queue=mail&token=s3cret&state=dead&q=a%20b`, { maxRedirects: 0 });
  assert.equal(login.status(), 303);
  assert.equal(login.headers().location, '/?queue=mail&state=dead&q=a%20b');
  // And the page opens what they name: the jobs filtered so, or one job.
  await browser.clearCookies();
  await page.goto(`${base}/?token=s3cret&queue=mail&state=succeeded`);
  await page.locator('#jobs tbody tr').first().waitFor();
  assert.equal(page.url(), `${base}/#/jobs?queue=mail&state=succeeded`);
  assert.equal(await page.locator('#jobs tbody tr').count(), 3);
  assert.equal(await page.locator('form.filters input[name="queue"]').inputValue(), 'mail');
  await page.screenshot({ path: path.join(shots, 'login-filtered.png') });
  await page.goto(`${base}/?job=1`);
  await page.locator('main h1 .pill').waitFor();
  assert.equal(page.url(), `${base}/#/jobs/1`);
  assert.match(await page.locator('main h1').innerText(), /^Job 1 /);
  // An action without its header is refused even with the cookie.
  const bare = await page.request.post(`${base}/api/queues/mail/pause`);
  assert.equal(bare.status(), 403);
});

test('at a laptop width every table stays inside its card and the page does not scroll sideways', { skip, timeout: 120_000 }, async (t) => {
  cli('enqueue', '--queue', 'wide', '--', 'echo', 'wide');
  cli('work', '--queue', 'wide', '--until-empty', '--concurrency', '1');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1280, height: 900 });
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  await page.locator('#workers tbody tr').first().waitFor();
  await page.screenshot({ path: path.join(shots, 'overview-1280.png'), fullPage: true });
  // Nothing of a card is past its right edge, drawn over it or hidden behind a scroll bar.
  const spill = await page.evaluate(() => [...document.querySelectorAll('.card')]
    .map((card) => ({ id: card.id, over: card.scrollWidth - card.clientWidth })).filter((c) => c.over > 0));
  assert.deepEqual(spill, [], 'cards wider inside than out');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the page scrolls sideways');
});

test('an address of a job that is no job id says so instead of listing every job', { skip, timeout: 120_000 }, async (t) => {
  cli('enqueue', '--queue', 'ids', '--', 'echo', 'ids');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1000, height: 600 });
  const page = await browser.newPage();
  for (const id of ['abc', '12x', '-1', '99999999999999999999']) {
    await page.goto('about:blank'); // a new hash alone would leave the last page's message up
    await page.goto(`${origin}/#/jobs/${id}`);
    await page.locator('main p.card').waitFor();
    const said = await page.locator('main').innerText();
    assert.equal(await page.locator('#jobs').count(), 0, `#/jobs/${id} listed the jobs: ${said}`);
    assert.match(said, new RegExp(`no job ${id.replace('-', '\\-')}: a job id is a whole number from 1`), said);
  }
  await page.screenshot({ path: path.join(shots, 'job-bad-id.png') });
});

test('a job that is not there is said to be missing, not the queue to be unreadable', { skip, timeout: 120_000 }, async (t) => {
  cli('enqueue', '--queue', 'gone', '--', 'echo', 'gone');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1000, height: 600 });
  const page = await browser.newPage();
  for (const [address, said] of [['#/jobs/987654321', /^no job 987654321: never queued, or deleted/], ['#/jobs/abc', /^no job abc: /],
    ['#/jobs?state=bogus', /^"bogus" is not a state/]]) {
    await page.goto('about:blank'); // a new hash alone would leave the last page's message up
    await page.goto(`${origin}/${address}`);
    await page.locator('main p.card').waitFor();
    const text = await page.locator('main').innerText();
    assert.match(text, said, `${address}: ${text}`);
  }
  await page.screenshot({ path: path.join(shots, 'job-missing.png') });
});

test('a job or the jobs opened at their own address name the database and say read-only', { skip, timeout: 120_000 }, async (t) => {
  const id = cli('enqueue', '--queue', 'header', '--', 'echo', 'header');
  const origin = await serve(t, ['--listen', '127.0.0.1:0', '--read-only']);
  const browser = await launch(t, { width: 1000, height: 600 });
  for (const address of [`#/jobs/${id}`, '#/jobs?queue=header']) {
    const page = await browser.newPage();
    await page.goto(`${origin}/${address}`);
    await page.locator('main h1').waitFor();
    assert.equal(await page.locator('#store').innerText(), 'SQLite · read-only', address);
    await page.screenshot({ path: path.join(shots, `header-${address.includes('?') ? 'jobs' : 'job'}.png`) });
    await page.close();
  }
});

test('a read-only job page has no buttons and no stray text where they would be', { skip, timeout: 120_000 }, async (t) => {
  const id = cli('enqueue', '--queue', 'readonly', '--', 'echo', 'ro');
  const origin = await serve(t, ['--listen', '127.0.0.1:0', '--read-only']);
  const browser = await launch(t, { width: 1000, height: 600 });
  const page = await browser.newPage();
  await page.goto(`${origin}/#/jobs/${id}`);
  await page.locator('main h1 .pill.queued').waitFor();
  assert.equal(await page.locator('main button').count(), 0);
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /\bnull\b|\bundefined\b/, text);
  await page.screenshot({ path: path.join(shots, 'job-read-only.png') });
});

test('the latency chart names its top in full, however long the jobs waited', { skip, timeout: 120_000 }, async (t) => {
  const due = new Date(Date.now() - 5 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  cli('enqueue', '--queue', 'late', '--at', due, '--', 'echo', 'late');
  cli('work', '--queue', 'late', '--until-empty', '--concurrency', '1');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1280, height: 900 });
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  const chart = page.locator('svg[aria-label="latency per minute"]');
  await chart.locator('circle').first().waitFor();
  const cut = await chart.evaluate((svg) => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text')].map((text) => ({ text: text.textContent, r: text.getBoundingClientRect() }))
      .filter(({ r }) => r.left < box.left - 0.5 || r.right > box.right + 0.5).map(({ text }) => text);
  });
  assert.deepEqual(cut, [], 'axis labels cut at the chart\'s edge');
  await page.locator('section.card', { has: chart }).screenshot({ path: path.join(shots, 'latency-long.png') });
});

test('a job that waits in a paused queue says the queue is paused and why the job waits', { skip, timeout: 120_000 }, async (t) => {
  const done = cli('enqueue', '--queue', 'held', '--', 'echo', 'before the pause');
  cli('work', '--queue', 'held', '--until-empty', '--concurrency', '1');
  cli('pause', 'held');
  const waiting = cli('enqueue', '--queue', 'held', '--', 'echo', 'after the pause');
  const origin = await serve(t, ['--listen', '127.0.0.1:0']);
  const browser = await launch(t, { width: 1100, height: 700 });
  const page = await browser.newPage();

  await page.goto(`${origin}/#/jobs/${waiting}`);
  const notice = page.locator('#paused');
  await notice.waitFor();
  assert.match(await notice.innerText(), /paused\s+Queue held is paused \(by .+ at .+\), so this job is not claimed until it is resumed/);
  assert.equal(await page.locator('main dl .pill.paused').count(), 1, 'the queue fact is marked paused');
  await page.screenshot({ path: path.join(shots, 'job-paused.png'), fullPage: true });

  // The list marks the queue of each of its jobs.
  await page.goto(`${origin}/#/jobs?queue=held`);
  await page.locator('#jobs tbody tr').first().waitFor();
  assert.equal(await page.locator('#jobs tbody tr .pill.paused').count(), 2);
  await page.screenshot({ path: path.join(shots, 'jobs-paused.png'), fullPage: true });

  // A job that finished before the pause is not said to wait.
  await page.goto(`${origin}/#/jobs/${done}`);
  await page.locator('main h1 .pill.succeeded').waitFor();
  assert.equal(await page.locator('#paused').count(), 0);

  // Resumed from the notice, the job no longer says it waits on the pause.
  await page.goto(`${origin}/#/jobs/${waiting}`);
  await page.locator('#paused button[data-action="resume"]').click();
  await page.locator('#confirm-ok').click();
  await notice.waitFor({ state: 'detached' });
  assert.equal(await page.locator('main .pill.paused').count(), 0);
  assert.doesNotMatch(cli('status'), /since \S+ by/, 'the queue was resumed');
});
