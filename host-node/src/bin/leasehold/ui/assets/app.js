// The leasehold dashboard: one page over the JSON API of `leasehold ui`.
// Views by the URL's hash: #/ (overview), #/jobs?queue=&state=&q=&before= (jobs),
// #/jobs/ID (one job; any other #/jobs/X says X is no job id), #/schedules (schedules); /?job=ID and
// /?queue=&state=&q=&before= open those pages. Server-sent events from /api/live say when the queue changed;
// the view then reads its data again. Every text from the queue goes into the page as
// text (never as HTML).
'use strict';

const STATES = ['queued', 'scheduled', 'retrying', 'running', 'succeeded', 'dead', 'cancelled'];
const SERIES = [
  ['done', 'succeeded', '#16a34a'], ['retrying', 'retrying', '#f59e0b'],
  ['dead', 'dead', '#dc2626'], ['lost', 'lost lease', '#a21caf'], ['cancelled', 'cancelled', '#6b7280'],
];
const main = document.getElementById('main');
let current = null; // { load: async () => void }
let busy = false;
let again = false;

// ---- small helpers ------------------------------------------------------------------
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}
function svg(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const c of children.flat(Infinity)) if (c) el.append(c instanceof Node ? c : String(c));
  return el;
}
const num = (n) => Number(n).toLocaleString('en-US');
function time(ms) {
  if (ms === null || ms === undefined) return '';
  const d = new Date(ms);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString('en-GB') : d.toLocaleString('en-GB');
}
function span(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  if (ms < 3600000) return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  return `${(ms / 3600000).toFixed(1)} h`;
}
// A span short enough for a chart's axis, left of its plot (at most about 7 characters).
function shortSpan(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
  if (ms < 3600000) return `${(ms / 60000).toFixed(1)} min`;
  return `${(ms / 3600000).toFixed(1)} h`;
}
const pill = (state) => h('span', { class: `pill ${state}` }, state);
// A queue's "paused" mark: `paused` is the API's { at, by } of the queue, or null (no mark).
const pausedPill = (paused) => paused
  ? h('span', { class: 'pill paused', title: `paused by ${paused.by} at ${time(paused.at)}: workers claim none of its jobs until it is resumed` }, 'paused')
  : null;
const WAITING = ['queued', 'scheduled', 'retrying'];
const SCHEDULES_EVERY_MS = 5000;

async function api(path, options = {}) {
  const response = await fetch(path, { credentials: 'same-origin', ...options });
  const body = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw Object.assign(new Error(body.error || `${response.status}`), { status: response.status });
  return body;
}

function toast(text, error = false) {
  const el = document.getElementById('toast');
  el.textContent = text;
  el.className = error ? 'error' : '';
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, error ? 8000 : 3500);
}

// ---- actions ------------------------------------------------------------------------
function confirmAction(text, withReason) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-reason-label').hidden = !withReason;
  document.getElementById('confirm-reason').value = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'
      ? { reason: document.getElementById('confirm-reason').value } : null), { once: true });
    dialog.showModal();
  });
}

async function act(path, question, withReason = false) {
  const answer = await confirmAction(question, withReason);
  if (!answer) return;
  try {
    const result = await api(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Leasehold-Action': '1' },
      body: JSON.stringify(withReason && answer.reason ? { reason: answer.reason } : {}),
    });
    toast(result.message);
  } catch (e) {
    toast(e.message, true);
  }
  refresh();
}

function button(label, action, cls = '') {
  return h('button', { class: cls, 'data-action': label.toLowerCase(), onclick: (e) => { e.stopPropagation(); action(); } }, label);
}

// ---- charts -------------------------------------------------------------------------
const W = 600, H = 170, L = 52, B = 20, T = 8; // L: room left of the plot for an axis label of 7 characters

function axes(max, buckets, unit) {
  const g = [svg('line', { class: 'axis', x1: L, y1: H - B, x2: W, y2: H - B }),
    svg('text', { x: L - 4, y: T + 8, 'text-anchor': 'end' }, unit(max)),
    svg('text', { x: L - 4, y: H - B, 'text-anchor': 'end' }, '0')];
  const n = buckets.length;
  for (const back of [60, 45, 30, 15, 0]) {
    const i = n - back;
    const x = L + ((W - L) * Math.max(0, i)) / n;
    g.push(svg('text', { x, y: H - 5, 'text-anchor': back === 0 ? 'end' : 'middle' }, back === 0 ? 'now' : `-${back} min`));
  }
  return g;
}

function throughputChart(activity) {
  const b = activity.buckets;
  const totals = b.map((x) => SERIES.reduce((s, [k]) => s + x[k], 0));
  const max = Math.max(1, ...totals);
  const bw = (W - L) / b.length;
  const bars = [];
  b.forEach((x, i) => {
    let y = H - B;
    for (const [k, label, color] of SERIES) {
      if (!x[k]) continue;
      const height = ((H - B - T) * x[k]) / max;
      y -= height;
      bars.push(svg('rect', { x: L + i * bw + 1, y, width: Math.max(1, bw - 2), height, fill: color },
        svg('title', {}, `${time(x.start_ms)}: ${x[k]} ${label}`)));
    }
  });
  return h('div', { class: 'chart' },
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'settlements per minute' }, axes(max, b, num), bars),
    h('div', { class: 'legend' }, SERIES.map(([, label, color]) => h('span', {}, swatch(color), label))));
}

function swatch(color) {
  const el = h('i');
  el.style.background = color;
  return el;
}

function latencyChart(activity) {
  const b = activity.buckets;
  const lines = [['waited', 'queued → started', '#3b82f6'], ['ran', 'started → settled', '#16a34a']];
  const max = Math.max(1, ...b.flatMap((x) => lines.map(([k]) => x[k].mean_ms)));
  const bw = (W - L) / b.length;
  const paths = lines.map(([k, label, color]) => {
    let d = '';
    const dots = [];
    b.forEach((x, i) => {
      if (!x[k].count) return;
      const px = L + i * bw + bw / 2;
      const py = H - B - ((H - B - T) * x[k].mean_ms) / max;
      d += `${d ? 'L' : 'M'}${px.toFixed(1)},${py.toFixed(1)}`;
      dots.push(svg('circle', { cx: px, cy: py, r: 2.5, fill: color },
        svg('title', {}, `${time(x.start_ms)}: ${label} mean ${span(x[k].mean_ms)}, longest ${span(x[k].max_ms)} (${x[k].count})`)));
    });
    return [svg('path', { d, fill: 'none', stroke: color, 'stroke-width': 2 }), dots];
  });
  return h('div', { class: 'chart' },
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'latency per minute' }, axes(max, b, shortSpan), paths),
    h('div', { class: 'legend' }, lines.map(([, label, color]) => h('span', {}, swatch(color), `${label} (mean per minute)`))));
}

// ---- views --------------------------------------------------------------------------
async function overview() {
  const data = await api('/api/overview');
  setStore(data);
  const { overview: o, activity, workers } = data;
  const head = h('tr', {}, h('th', {}, 'queue'), STATES.map((s) => h('th', { class: 'n' }, s)), h('th', {}, ''), data.readOnly ? null : h('th', {}, ''));
  const rows = o.queues.map((q) => h('tr', { 'data-queue': q.queue },
    h('td', {}, h('a', { href: `#/jobs?queue=${encodeURIComponent(q.queue)}` }, q.queue)),
    STATES.map((s) => {
      const n = q.counts[s];
      const text = (s === 'succeeded' && o.succeeded_estimated ? '≈ ' : '') + num(n);
      return h('td', { class: `n${n ? '' : ' zero'}`, 'data-state': s },
        h('a', { class: 'count', href: `#/jobs?queue=${encodeURIComponent(q.queue)}&state=${s}` }, text));
    }),
    h('td', {}, pausedPill(q.paused_at_ms ? { at: q.paused_at_ms, by: q.paused_by } : null)),
    data.readOnly ? null : h('td', {}, q.paused_at_ms
      ? button('Resume', () => act(`/api/queues/${encodeURIComponent(q.queue)}/resume`, `Resume queue ${q.queue}? Workers claim its jobs again.`), 'secondary')
      : button('Pause', () => act(`/api/queues/${encodeURIComponent(q.queue)}/pause`, `Pause queue ${q.queue}? Workers stop claiming its jobs within one poll; running jobs finish.`), 'secondary'))));
  const estimate = o.succeeded_estimated
    ? h('p', { class: 'note' }, `≈ Succeeded counts are estimates: the jobs table spans ${num(o.id_span)} job ids, too many to count on every refresh, so ${num(o.sampled_ids)} ids spread over them are sampled. Every other count is exact.`)
    : null;
  const sum = (k) => activity.buckets.reduce((s, x) => s + x[k], 0);
  const fromWorkers = (k) => workers.reduce((s, w) => s + w.counters[k], 0);
  main.replaceChildren(
    h('h1', {}, 'Overview'),
    h('section', { class: 'card', id: 'queues' }, h('h2', {}, 'Queues'),
      o.queues.length ? h('table', {}, h('thead', {}, head), h('tbody', {}, rows)) : h('p', { class: 'empty' }, 'No jobs yet: enqueue one with leasehold enqueue -- COMMAND.'),
      estimate),
    h('div', { class: 'grid' },
      h('section', { class: 'card' }, h('h2', {}, 'Throughput: settlements per minute, last hour'), throughputChart(activity)),
      h('section', { class: 'card' }, h('h2', {}, 'Latency per minute, last hour'), latencyChart(activity),
        h('p', { class: 'note' }, 'Queued → started: from due to claimed, of jobs that finished. Started → settled: each attempt that ended its work.'))),
    h('div', { class: 'grid' },
      h('section', { class: 'card', id: 'lease-health' }, h('h2', {}, 'Lease health'),
        h('div', { class: 'stats' },
          stat('leases lost to a takeover (last hour)', sum('lost')), stat('of them stolen', sum('stolen')),
          stat('claims handed back', sum('released')),
          workers.length ? [stat('renewals', fromWorkers('renewals')), stat('lapses', fromWorkers('lapses')),
            stat('losses', fromWorkers('losses')), stat('steals', fromWorkers('steals'))] : null),
        h('p', { class: 'note' }, workers.length
          ? 'Renewals, lapses, losses and steals are the totals the workers listed report.'
          : 'Renewals and lapses are counted by the workers, and none has recorded itself yet.')),
      h('section', { class: 'card', id: 'workers' }, h('h2', {}, 'Workers'), workersTable(workers, data.now))));
}

function stat(label, n) {
  return h('div', { class: 'stat' }, h('b', {}, num(n)), h('span', { class: 'muted' }, label));
}

function workersTable(workers, now) {
  if (!workers.length) return h('p', { class: 'empty' }, 'No worker seen yet. Workers (leasehold work) record themselves here every few seconds.');
  return h('table', {},
    h('thead', {}, h('tr', {}, ['queue', 'host', 'pid', 'started', 'last seen', 'claimed', 'succeeded', 'failed', 'dead'].map((t, i) => h('th', { class: i > 4 || i === 2 ? 'n' : '' }, t)))),
    h('tbody', {}, workers.map((w) => h('tr', {},
      h('td', {}, w.queue), h('td', {}, w.hostname || w.host), h('td', { class: 'n' }, w.pid), h('td', {}, time(w.startedAt)),
      h('td', {}, w.stoppedAt ? `stopped ${time(w.stoppedAt)}` : `${span(Math.max(0, now - w.lastSeen))} ago`),
      h('td', { class: 'n' }, num(w.counters.claimed)), h('td', { class: 'n' }, num(w.counters.succeeded)),
      h('td', { class: 'n', title: 'failed attempts to be tried again' }, num(w.counters.failed)),
      h('td', { class: 'n', title: 'failed attempts that were the last (dead-lettered)' }, num(w.counters.deadLettered))))));
}

async function jobs(params) {
  const query = new URLSearchParams();
  for (const k of ['queue', 'state', 'q', 'before']) if (params.get(k)) query.set(k, params.get(k));
  const data = await api(`/api/jobs?${query}`);
  setStore(data);
  const field = (name, attrs) => h('input', { name, value: params.get(name) || '', ...attrs });
  const state = h('select', { name: 'state' }, h('option', { value: '' }, 'any state'),
    STATES.map((s) => h('option', { value: s, selected: params.get('state') === s }, s)));
  const form = h('form', { class: 'filters', onsubmit: (e) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(e.target)) if (v) next.set(k, v);
    location.hash = `#/jobs?${next}`;
  } }, field('queue', { placeholder: 'queue' }), state, field('q', { placeholder: 'text in the command or payload', size: 32 }),
  h('button', {}, 'Filter'), h('a', { href: '#/jobs', class: 'muted' }, 'clear'));
  const rows = data.jobs.map((j) => h('tr', { class: 'click', 'data-job-id': j.id, onclick: () => { location.hash = `#/jobs/${j.id}`; } },
    h('td', { class: 'n' }, h('a', { href: `#/jobs/${j.id}` }, j.id)), h('td', {}, j.queue, j.queuePaused ? ' ' : null, pausedPill(j.queuePaused)), h('td', {}, pill(j.state)),
    h('td', { class: 'n' }, `${j.attempts}/${j.maxAttempts}`), h('td', {}, time(j.createdAt)),
    h('td', { class: 'cmd', title: j.command }, j.command), h('td', { class: 'cmd' }, j.lastError || '')));
  const older = new URLSearchParams(query);
  if (data.next) older.set('before', data.next);
  const newest = new URLSearchParams(query);
  newest.delete('before');
  main.replaceChildren(
    h('h1', {}, 'Jobs'), form,
    h('section', { class: 'card' },
      rows.length ? h('table', { id: 'jobs' }, h('thead', {}, h('tr', {}, ['id', 'queue', 'state', 'attempts', 'created', 'command', 'last error'].map((t) => h('th', { class: t === 'id' || t === 'attempts' ? 'n' : '' }, t)))), h('tbody', {}, rows))
        : h('p', { class: 'empty' }, data.searchedDownTo ? `No match among the jobs above id ${num(data.searchedDownTo)}.` : 'No job matches.'),
      data.searchedDownTo ? h('p', { class: 'note' }, `This page searched down to job id ${num(data.searchedDownTo)} (a search looks at ${num(100000)} ids at a time); older ones are on the next page.`) : null,
      h('div', { class: 'pager' },
        params.get('before') ? h('a', { href: `#/jobs?${newest}` }, '← newest') : null,
        data.next ? h('a', { href: `#/jobs?${older}`, id: 'older' }, 'older →') : null)));
}

async function job(id) {
  // #/jobs/abc is an address of a job too: say what is wrong with it rather than list the jobs.
  if (!/^\d+$/.test(id) || BigInt(id) < 1n || BigInt(id) > 9223372036854775807n) {
    throw Object.assign(new Error(`no job ${id}: a job id is a whole number from 1, as the jobs page lists them`), { status: 400 });
  }
  const data = await api(`/api/jobs/${id}`);
  setStore(data);
  const j = data.job;
  const open = ['queued', 'scheduled', 'retrying', 'running'].includes(j.state);
  const actions = data.readOnly ? null : h('div', { class: 'actions' },
    open ? button('Cancel', () => act(`/api/jobs/${id}/cancel`, `Cancel job ${id}? ${j.state === 'running' ? 'Its command is stopped as on a lost lease and nothing of this attempt is kept.' : 'It will not run.'}`, true), 'danger') : null,
    ['dead', 'cancelled'].includes(j.state) ? button('Retry', () => act(`/api/jobs/${id}/retry`, `Queue job ${id} again, with a fresh attempt budget?`)) : null);
  const facts = [['queue', [j.queue, j.queuePaused ? ' ' : null, pausedPill(j.queuePaused)]], ['attempts', `${j.attempts} of ${j.maxAttempts}`], ['created', time(j.createdAt)],
    ['due', WAITING.includes(j.state) ? time(j.runAt) : null],
    ['finished', j.finishedAt ? `${time(j.finishedAt)} (${span(j.finishedAt - j.createdAt)} after it was queued)` : null],
    ['priority', j.priority], ['timeout', j.timeoutMs ? span(j.timeoutMs) : null], ['idempotency key', j.idempotencyKey],
    ['cancelled', j.cancellation ? `${time(j.cancellation.at)} by ${j.cancellation.by}${j.cancellation.reason ? `: ${j.cancellation.reason}` : ''}` : null],
    ['last error', j.lastError]].filter(([, v]) => v !== null && v !== undefined && v !== '');
  // A job of a paused queue that waits (or runs) is told why it is not claimed (or what comes after it).
  const paused = j.queuePaused && open ? h('div', { class: 'card notice', id: 'paused' },
    data.readOnly ? null : button('Resume', () => act(`/api/queues/${encodeURIComponent(j.queue)}/resume`, `Resume queue ${j.queue}? Workers claim its jobs again.`), 'secondary'),
    h('p', {}, pausedPill(j.queuePaused), ' ', `Queue ${j.queue} is paused (by ${j.queuePaused.by} at ${time(j.queuePaused.at)}), `,
      j.state === 'running' ? 'so once this job ends workers claim none of its jobs until it is resumed.'
        : 'so this job is not claimed until it is resumed: workers claim none of its jobs meanwhile.',
      data.readOnly ? ` leasehold resume ${j.queue} resumes it.` : null)) : null;
  main.replaceChildren(
    // replaceChildren writes a null as the text "null": a read-only page has no actions to show.
    h('h1', {}, `Job ${j.id} `, pill(j.state)), actions ?? '', paused ?? '',
    h('div', { class: 'grid' },
      h('section', { class: 'card' }, h('h2', {}, 'Job'), h('dl', {}, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
      h('section', { class: 'card' }, h('h2', {}, typeof j.payload === 'object' && j.payload && 'command' in j.payload ? 'Command' : 'Payload'),
        h('pre', { id: 'command' }, typeof j.payload === 'object' && j.payload && typeof j.payload.command === 'string' ? j.payload.command : JSON.stringify(j.payload, null, 2)))),
    h('section', { class: 'card', id: 'attempts' }, h('h2', {}, `Attempts (${data.attempts.length})`),
      data.attempts.length ? data.attempts.map(attemptView) : h('p', { class: 'empty' }, 'Not claimed yet.')),
    h('section', { class: 'card', id: 'settlements' }, h('h2', {}, 'Settlements'),
      data.settlements.length ? h('table', {}, h('thead', {}, h('tr', {}, ['at', 'event', 'attempt', 'fencing token', 'owner', 'detail'].map((t) => h('th', { class: t === 'attempt' || t === 'fencing token' ? 'n' : '' }, t)))),
        h('tbody', {}, data.settlements.map((s) => h('tr', {}, h('td', {}, time(s.at)), h('td', {}, s.type), h('td', { class: 'n' }, s.attempt),
          h('td', { class: 'n' }, s.token), h('td', {}, s.owner || ''), h('td', {}, [s.error, s.retryAt ? `retry at ${time(s.retryAt)}` : null].filter(Boolean).join('; '))))))
        : h('p', { class: 'empty' }, 'None journaled yet.')));
}

async function schedules() {
  const data = await api('/api/schedules');
  setStore(data);
  const now = data.now;
  const when = (s) => s.cron
    ? [h('code', {}, s.cron), ' ', h('span', { class: 'muted' }, s.timeZone)]
    : s.cadence;
  const next = (s) => {
    if (s.pausedAt) return h('span', { class: 'muted' }, `paused since ${time(s.pausedAt)}`);
    if (s.nextRun === null) return h('span', { class: 'muted' }, 'never: no slot left');
    const at = [time(s.nextRun), ' ', h('span', { class: 'muted' }, s.nextRun >= now ? `in ${span(s.nextRun - now)}` : `${span(now - s.nextRun)} ago`)];
    return s.overdue ? [at, h('div', { class: 'warn' }, `overdue: no worker of queue ${s.queue} is running`)] : at;
  };
  const last = (s) => s.lastRun ? [time(s.lastRun.slot), ' ', h('span', { class: 'muted' }, `${span(Math.max(0, now - s.lastRun.slot))} ago`)] : h('span', { class: 'muted' }, 'never');
  const outcome = (s) => s.lastRun
    ? [h('a', { href: `#/jobs/${s.lastRun.job}` }, `job ${s.lastRun.job}`), ' ', s.lastRun.state ? pill(s.lastRun.state) : h('span', { class: 'muted' }, 'deleted')]
    : '';
  const rows = data.schedules.map((s) => h('tr', { 'data-schedule': s.name },
    h('td', {}, h('b', {}, s.name), s.pausedAt ? [' ', h('span', { class: 'pill paused', title: `paused at ${time(s.pausedAt)}: its slots are skipped until it is resumed` }, 'paused')] : null),
    h('td', {}, h('a', { href: `#/jobs?queue=${encodeURIComponent(s.queue)}` }, s.queue)),
    h('td', { 'data-field': 'when' }, when(s)), h('td', { 'data-field': 'next' }, next(s)), h('td', { 'data-field': 'last' }, last(s)),
    h('td', { 'data-field': 'outcome' }, outcome(s)), h('td', {}, s.policy.split(', ').map((part) => h('div', {}, part))),
    h('td', { class: 'cmd', title: s.command }, s.command),
    data.readOnly ? null : h('td', {}, scheduleButton(s))));
  const head = ['name', 'queue', 'when', 'next run', 'last run', 'last outcome', 'policy', 'command'].map((t) => h('th', {}, t));
  main.replaceChildren(
    h('h1', {}, 'Schedules'),
    h('section', { class: 'card' },
      rows.length
        ? h('table', { id: 'schedules' }, h('thead', {}, h('tr', {}, head, data.readOnly ? null : h('th', {}, ''))), h('tbody', {}, rows))
        : h('p', { class: 'empty' }, 'No schedules: add one with leasehold schedule add NAME --every 5m -- COMMAND (or --cron "0 3 * * *").'),
      h('p', { class: 'note' }, 'A running worker (leasehold work) of the schedule\'s queue enqueues the job of each slot, due at the slot. Times are in this browser\'s time zone.',
        data.readOnly ? ' leasehold schedule pause NAME stops a schedule and resume NAME starts it again.' : null)));
}

function scheduleButton(s) {
  const path = `/api/schedules/${encodeURIComponent(s.name)}`;
  return s.pausedAt
    ? button('Resume', () => act(`${path}/resume`, `Resume schedule ${s.name}? Its slots are queued again from the next one after now; the ones it skipped while paused are not.`), 'secondary')
    : button('Pause', () => act(`${path}/pause`, `Pause schedule ${s.name}? Its slots are skipped until it is resumed; jobs it queued already stay.`), 'secondary');
}

function attemptView(a) {
  const ended = a.endedAt ? `${time(a.endedAt)} (${span(a.endedAt - a.startedAt)})` : 'running';
  return h('div', { class: `attempt ${a.outcome}` },
    h('b', {}, `Attempt ${a.n}: ${a.outcome}`), h('span', { class: 'muted' }, ` — fencing token ${a.token}`),
    h('dl', {}, h('dt', {}, 'owner'), h('dd', {}, `${a.owner.host} pid ${a.owner.pid} (${a.owner.nonce})`),
      h('dt', {}, 'ran'), h('dd', {}, `${time(a.startedAt)} → ${ended}`),
      a.exitCode !== null && a.exitCode !== undefined ? [h('dt', {}, 'exit code'), h('dd', {}, a.exitCode)] : null,
      a.error ? [h('dt', {}, 'error'), h('dd', {}, a.error)] : null,
      a.resultError ? [h('dt', {}, 'result'), h('dd', {}, a.resultError)] : null,
      a.result !== null && a.result !== undefined ? [h('dt', {}, 'result'), h('dd', {}, h('pre', {}, JSON.stringify(a.result, null, 2)))] : null),
    a.output ? h('pre', {}, a.output) : null);
}

function setStore(data) {
  document.getElementById('store').textContent = `${data.store}${data.readOnly ? ' · read-only' : ''}`;
}

// ---- routing and live updates -------------------------------------------------------
// An address without a page of its own in the hash that names one in its query string
// (/?job=42, /?queue=mail&state=dead, as a login by ?token= keeps them) opens that page:
// the address becomes the page's own (#/jobs/42, #/jobs?queue=mail&state=dead).
function pageOfQuery() {
  if (location.hash.replace(/^#\/?/, '')) return;
  const given = new URLSearchParams(location.search);
  const filters = new URLSearchParams();
  for (const k of ['queue', 'state', 'q', 'before']) if (given.get(k)) filters.set(k, given.get(k));
  const hash = given.get('job') ? `#/jobs/${encodeURIComponent(given.get('job'))}` : [...filters].length ? `#/jobs?${filters}` : null;
  if (hash) history.replaceState(null, '', `${location.pathname}${hash}`);
}

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, search] = hash.split('?');
  const params = new URLSearchParams(search || '');
  const one = path.match(/^\/jobs\/(.+)$/);
  const nav = path.startsWith('/jobs') ? 'jobs' : path.startsWith('/schedules') ? 'schedules' : 'overview';
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('on', a.dataset.nav === nav));
  current = one ? { load: () => job(one[1]) } : nav === 'jobs' ? { load: () => jobs(params) } : nav === 'schedules' ? { load: schedules } : { load: overview };
  // The schedules page says how far off each next run is, and a next run that passes with
  // no worker to enqueue it (overdue) changes nothing in the queue: it is read again on a timer.
  clearInterval(route.timer);
  if (nav === 'schedules') route.timer = setInterval(() => { if (!document.hidden && !document.getElementById('confirm').open) refresh(); }, SCHEDULES_EVERY_MS);
  refresh();
}

async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const y = window.scrollY;
    await current.load();
    window.scrollTo(0, y);
  } catch (e) {
    // A 4xx is an answer about what was asked (no such job, a bad filter): said as it is.
    // Anything else (no answer, a 5xx) is the queue that could not be read.
    const asked = e.status >= 400 && e.status < 500;
    main.replaceChildren(h('p', { class: 'card' }, asked ? e.message : `Could not read the queue: ${e.message}`));
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}

function listen() {
  const live = document.getElementById('live');
  const source = new EventSource('/api/live');
  source.addEventListener('hello', () => { live.textContent = 'live'; live.classList.add('on'); });
  source.addEventListener('change', () => {
    // The dialog stays as it is while someone is deciding.
    if (!document.getElementById('confirm').open) refresh();
  });
  source.onerror = () => { live.textContent = 'reconnecting…'; live.classList.remove('on'); };
}

window.addEventListener('hashchange', route);
pageOfQuery();
route();
listen();
