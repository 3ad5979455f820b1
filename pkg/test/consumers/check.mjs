// Checks the npm package as its users get it: packs the tarball, lints it, installs it into
// a scratch project and uses it from strict TypeScript, Node.js (ES module, CommonJS, and
// bundled by esbuild) and browser apps built with esbuild, Vite 5, current Vite and webpack 5,
// run in headless Chromium (the runner, and a job queue over IndexedDB).
//
//   node pkg/test/consumers/check.mjs     (after scripts/build-pkg.sh, and npm ci here)
//
// Prints what each check printed, the tarball's size and files and each .wasm gzipped; exits
// 1 at the first failure. A check whose tool is missing prints one SKIP line instead.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { serve } from '../serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, '../..');
const work = path.join(here, 'work');
const app = path.join(work, 'app');
const require = createRequire(path.join(here, 'package.json'));
const chromiumPath = '/usr/bin/chromium';

const step = (name) => console.log(`\n-- ${name}`);
const skip = (name, why) => console.log(`SKIP ${name}: ${why}`);
function fail(message) {
  console.error(`consumer check failed: ${message}`);
  process.exit(1);
}
function check(condition, message) {
  if (!condition) fail(message);
}
/** Runs a command; prints its output; fails with it when it exits non-zero. */
function sh(command, args, options = {}) {
  const run = spawnSync(command, args, { encoding: 'utf8', ...options, env: { ...process.env, ...options.env } });
  const out = `${run.stdout ?? ''}${run.stderr ?? ''}`.trimEnd();
  if (!options.quiet && out) console.log(out);
  if (run.status !== 0) fail(`${command} ${args.join(' ')} exited ${run.status ?? run.signal}${options.quiet ? `:\n${out}` : ''}`);
  return out;
}
/** The folder of an installed package: here, or in pkg/ (typescript, playwright-core). */
function installed(id) {
  for (const base of [here, pkg]) {
    const dir = path.join(base, 'node_modules', id);
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return undefined;
}
const has = (id) => installed(id) !== undefined;
const bin = (id, file) => path.join(installed(id), file);

if (!existsSync(path.join(pkg, 'dist', 'index.cjs'))) fail('pkg/dist is missing: run scripts/build-pkg.sh first');

// --- the tarball ---------------------------------------------------------------------
step('npm pack');
rmSync(work, { recursive: true, force: true });
mkdirSync(app, { recursive: true });
const [packed] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', work], { cwd: pkg, quiet: true }));
const tarball = path.join(work, packed.filename);
const files = packed.files.map((f) => f.path).sort();
console.log(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${files.length} files`);
for (const f of packed.files.sort((a, b) => a.path.localeCompare(b.path))) console.log(`  ${String(f.size).padStart(7)}  ${f.path}`);
const manifest = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8'));
const wasmExports = Object.keys(manifest.exports).filter((key) => key.endsWith('.wasm'));
const wasm = files.filter((f) => f.endsWith('.wasm'));
check(
  JSON.stringify(wasm) === JSON.stringify(wasmExports.map((key) => `dist/${key.slice(2)}`).sort()),
  `each .wasm once, in dist/, each exported: files ${wasm}, exports ${wasmExports}`,
);
check(wasm.includes('dist/leasehold_bg.wasm') && wasm.includes('dist/leasehold_trace_bg.wasm'), `the runner's and trace ring's .wasm: ${wasm}`);
for (const f of wasm) {
  const bytes = readFileSync(path.join(pkg, f));
  console.log(`${f}: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzipped`);
}
for (const f of ['LICENSE-MIT', 'LICENSE-APACHE', 'README.md', 'examples/postgres-queue.mjs', 'package.json']) {
  check(files.includes(f), `${f} is not in the tarball`);
}
const declarations = files.filter((f) => f.endsWith('.d.ts') || f.endsWith('.d.mts'));
// Only the package's own declarations: one pair per entry, none of wasm-bindgen's.
const entryTypes = new Set(JSON.stringify(manifest.exports).match(/\.\/dist\/[\w.]+\.d\.m?ts/g).map((t) => t.slice(2)));
check(
  JSON.stringify(declarations) === JSON.stringify([...entryTypes].sort()),
  `only declarations that an export reaches ship: files ${declarations}, exports ${[...entryTypes]}`,
);
// Every relative link of the README names a file in the tarball.
const readme = readFileSync(path.join(pkg, 'README.md'), 'utf8');
for (const [, target] of readme.matchAll(/\]\((?!https?:|#)([^)#]+)/g)) {
  check(files.includes(path.posix.normalize(target)), `README links ${target}, which is not in the tarball`);
}

// --- linters ----------------------------------------------------------------------------
step('@arethetypeswrong/cli');
if (has('@arethetypeswrong/cli')) {
  // The .wasm subpaths are assets (for esbuild's file loader, ?url imports), not modules:
  // there are no types to resolve for them.
  sh(process.execPath, [bin('@arethetypeswrong/cli', 'dist/index.js'), tarball, '--format', 'ascii',
    '--exclude-entrypoints', ...wasmExports], { env: { NO_COLOR: '1', FORCE_COLOR: '0' } });
} else skip('attw', 'not installed in pkg/test/consumers (npm ci there)');

step('publint');
const unpacked = path.join(work, 'unpacked');
mkdirSync(unpacked);
sh('tar', ['-xzf', tarball, '-C', unpacked]);
if (has('publint')) {
  const out = sh(process.execPath, [bin('publint', 'src/cli.js'), path.join(unpacked, 'package'), '--strict']);
  check(/All good!/.test(out), 'publint has something to say (above)');
} else skip('publint', 'not installed in pkg/test/consumers (npm ci there)');

// --- installed as a user installs it -------------------------------------------------------
step('npm install the tarball into a scratch project');
writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
sh('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', tarball], { cwd: work });
cpSync(path.join(here, 'app'), app, { recursive: true });

step('tsc --strict: a node16 program and a bundler program');
if (has('typescript')) {
  for (const config of ['tsconfig.node16.json', 'tsconfig.bundler.json']) {
    sh(process.execPath, [bin('typescript', 'bin/tsc'), '-p', path.join(app, 'types', config)]);
    console.log(`${config}: no errors`);
  }
} else skip('tsc', 'typescript is not installed (pkg/node_modules)');

step('Node.js: an ES module and a CommonJS program exit by themselves');
const expected = { claimed: 10, performed: 10, failed: 0, claimLost: 0 };
function nodeRun(file, node = process.execPath) {
  const run = spawnSync(node, [file], { cwd: app, encoding: 'utf8', timeout: 20_000 });
  const on = node === process.execPath ? '' : ` (Node.js ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()})`;
  check(run.status === 0, `${file}${on} exited ${run.status ?? run.signal} (a timeout means it did not exit by itself): ${run.stderr}`);
  const result = JSON.parse(run.stdout);
  check(JSON.stringify(result.report) === JSON.stringify(expected), `${file}${on}: ${run.stdout}`);
  console.log(`${file}${on}: ${JSON.stringify(result.report)}, exited by itself`);
}
nodeRun('node-esm.mjs');
nodeRun('node-cjs.cjs');
// The other Node.js lines scripts/install-tools.sh fetched, when there are any.
const lines = path.join(here, '..', '..', '..', 'target', 'node-lines');
for (const version of existsSync(lines) ? readdirSync(lines).sort() : []) {
  const node = path.join(lines, version, 'bin', 'node');
  if (!existsSync(node)) continue;
  nodeRun('node-esm.mjs', node);
  nodeRun('node-cjs.cjs', node);
}
{
  const run = spawnSync(process.execPath, ['node-otel.mjs'], { cwd: app, encoding: 'utf8', timeout: 20_000 });
  check(run.status === 0, `node-otel.mjs exited ${run.status ?? run.signal}: ${run.stderr}`);
  const spans = JSON.parse(run.stdout).map((s) => `${s.name}/${s.kind}/${s.links}/${s.ended}`).sort();
  const want = ['process consumer.otel/4/1/true', 'process consumer.otel/4/1/true', 'receive consumer.otel/2/0/true'];
  check(JSON.stringify(spans) === JSON.stringify(want), `node-otel.mjs: leasehold/otel made ${spans}`);
  console.log(`node-otel.mjs: leasehold/otel made ${spans.length} spans (a receive, a process per item, linked)`);
}

// --- bundlers ----------------------------------------------------------------------------
const builds = []; // [name, folder with index.html]
const page = (script) =>
  `<!doctype html><meta charset="utf-8"><title>leasehold</title><script type="module" src="${script}"></script>\n`;

step('esbuild');
if (has('esbuild')) {
  const esbuild = await import('esbuild');
  const out = path.join(work, 'out-esbuild');
  await esbuild.build({
    entryPoints: [path.join(app, 'esbuild.js')], bundle: true, format: 'esm', platform: 'browser',
    loader: { '.wasm': 'file' }, outdir: out, logLevel: 'warning',
  });
  writeFileSync(path.join(out, 'index.html'), page('./esbuild.js'));
  console.log(`built: ${readdirSync(out).sort().join(', ')}`);
  builds.push(['esbuild', out]);

  step('Node.js bundled by esbuild, the .wasm files copied beside the bundle');
  const nodeOut = path.join(work, 'out-node');
  await esbuild.build({
    entryPoints: [path.join(app, 'node-cjs.cjs')], bundle: true, platform: 'node', outfile: path.join(nodeOut, 'main.cjs'),
    logLevel: 'warning',
  });
  cpSync(path.join(app, 'run.js'), path.join(nodeOut, 'run.js'));
  for (const f of wasm) cpSync(path.join(work, 'node_modules', 'leasehold', f), path.join(nodeOut, path.basename(f)));
  rmSync(path.join(work, 'node_modules', 'leasehold'), { recursive: true }); // the bundle alone
  const run = spawnSync(process.execPath, ['main.cjs'], { cwd: nodeOut, encoding: 'utf8', timeout: 20_000 });
  check(run.status === 0 && JSON.parse(run.stdout).report.performed === 10, `the bundled program: ${run.stdout}${run.stderr}`);
  console.log(`main.cjs: ${JSON.stringify(JSON.parse(run.stdout).report)}, exited by itself`);
  sh('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', tarball], { cwd: work });
} else skip('esbuild', 'not installed in pkg/test/consumers (npm ci there)');

for (const [name, id] of [['Vite 5', 'vite5'], ['Vite (current)', 'vite']]) {
  step(name);
  if (!has(id)) {
    skip(name, 'not installed in pkg/test/consumers (npm ci there)');
    continue;
  }
  const vite = await import(id);
  const out = path.join(work, `out-${id}`);
  await vite.build({ root: app, logLevel: 'warn', build: { outDir: out, emptyOutDir: true } });
  console.log(`vite ${vite.version}: ${readdirSync(path.join(out, 'assets')).sort().join(', ')}`);
  builds.push([`${name} ${vite.version}`, out]);
}

step('webpack 5');
if (has('webpack')) {
  const webpack = require(installed('webpack'));
  const out = path.join(work, 'out-webpack');
  const stats = await new Promise((resolve, reject) =>
    webpack(
      {
        mode: 'production', target: 'web', entry: path.join(app, 'webpack.js'),
        // Named assets only so that this check can tell the two .wasm files apart.
        output: { path: out, publicPath: 'auto', assetModuleFilename: '[name]-[hash][ext]' },
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
  check(!stats.hasErrors(), stats.toString('errors-only'));
  writeFileSync(path.join(out, 'index.html'), page('./main.js'));
  console.log(`webpack ${webpack.version}: ${readdirSync(out).sort().join(', ')}`);
  builds.push([`webpack ${webpack.version}`, out]);
} else skip('webpack', 'not installed in pkg/test/consumers (npm ci there)');

step('the browser bundles carry no SQL (the queue statements load only in leasehold/postgres and leasehold/pglite)');
for (const [name, folder] of builds) {
  const scripts = readdirSync(folder, { recursive: true }).filter((f) => String(f).endsWith('.js'));
  const sql = scripts.filter((f) => readFileSync(path.join(folder, String(f)), 'utf8').includes('leasehold_jobs'));
  check(sql.length === 0, `${name}: SQL of the queue in ${sql}`);
  console.log(`${name}: ${scripts.length} scripts, none with SQL`);
}

// --- the built apps in a browser -------------------------------------------------------------
step('the built apps in headless Chromium');
if (!existsSync(chromiumPath)) {
  skip('browser apps', `no Chromium at ${chromiumPath}`);
} else if (!has('playwright-core')) {
  skip('browser apps', 'playwright-core is not installed (pkg/node_modules)');
} else {
  const { chromium } = require(installed('playwright-core'));
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    for (const [name, folder] of builds) {
      const server = await serve(folder);
      try {
        const tab = await browser.newPage();
        const errors = [];
        tab.on('pageerror', (error) => errors.push(String(error)));
        await tab.goto(`${server.origin}/index.html`);
        await tab.waitForFunction(() => globalThis.__result !== undefined, undefined, { timeout: 30_000 });
        const result = await tab.evaluate(() => globalThis.__result);
        await tab.close();
        check(result.error === undefined, `${name}: ${result.error}`);
        check(errors.length === 0, `${name}: page errors ${errors}`);
        check(JSON.stringify(result.report) === JSON.stringify(expected), `${name}: report ${JSON.stringify(result.report)}`);
        check(result.done.length === 10 && result.traced.join() === '10', `${name}: ${JSON.stringify(result)}`);
        check(JSON.stringify(result.queue) === '[10,20,30]', `${name}: leasehold/indexeddb answered ${JSON.stringify(result.queue)}`);
        check(result.fetched.atImport.length === 0 || name.startsWith('webpack'), `${name}: fetched ${result.fetched.atImport} on import`);
        check(result.fetched.afterInit.join() === 'leasehold_bg.wasm', `${name}: init fetched ${result.fetched.afterInit}`);
        if (result.early !== undefined) check(/await init\(\)/.test(result.early), `${name}: ${result.early}`);
        console.log(`${name}: performed ${result.report.performed} of 10 in Chromium; init fetched ${result.fetched.afterInit}, the trace ring on initTrace; leasehold/indexeddb worked 3 jobs`);
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
}
console.log('\nconsumer checks: all passed');

