#!/usr/bin/env node
// The rust-version each published crate needs, derived from its dependency tree, and
// whether its Cargo.toml says so.
//
//   node scripts/rust-version.mjs          print, per crate, the declared and the needed version
//   node scripts/rust-version.mjs --check  the same, exit 1 when one differs
//
// Needed = the highest `rust-version` declared by any package the crate builds with
// (normal and build dependencies, every feature on, every target platform), and at least
// what the crate's edition needs. Dev-dependencies do not count: a user never builds them.
// Read from `cargo metadata`, so the figure follows Cargo.lock.
import { execFileSync } from 'node:child_process';

const EDITION_MINIMUM = { 2015: '1.0', 2018: '1.31', 2021: '1.56', 2024: '1.85' };
const parse = (v) => (v ?? '0').split('.').map(Number);
const newer = (a, b) => {
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
};
const short = (v) => parse(v).slice(0, 2).join('.'); // "1.94.0" and "1.94" are one version

const metadata = JSON.parse(
  execFileSync('cargo', ['metadata', '--format-version', '1', '--all-features', '--locked'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  }),
);
const byId = new Map(metadata.packages.map((p) => [p.id, p]));
const nodes = new Map(metadata.resolve.nodes.map((n) => [n.id, n]));
const members = new Set(metadata.workspace_members);

let differs = 0;
for (const id of metadata.workspace_members) {
  const crate = byId.get(id);
  if (Array.isArray(crate.publish) && crate.publish.length === 0) continue; // publish = false
  let needed = EDITION_MINIMUM[crate.edition];
  let because = `edition ${crate.edition}`;
  const seen = new Set([id]);
  const queue = [id];
  while (queue.length) {
    for (const dep of nodes.get(queue.shift()).deps) {
      const used = dep.dep_kinds.some((k) => k.kind === null || k.kind === 'build');
      if (!used || seen.has(dep.pkg)) continue;
      seen.add(dep.pkg);
      queue.push(dep.pkg);
      const pkg = byId.get(dep.pkg);
      if (!members.has(dep.pkg) && pkg.rust_version && newer(pkg.rust_version, needed)) {
        needed = pkg.rust_version;
        because = `${pkg.name} ${pkg.version}`;
      }
    }
  }
  const declared = crate.rust_version ?? '(none)';
  const ok = short(declared) === short(needed);
  if (!ok) differs++;
  console.log(`${crate.name}: rust-version ${declared}, its tree needs ${short(needed)} (${because})${ok ? '' : '  <- differs'}`);
}
if (process.argv.includes('--check') && differs) {
  console.error('rust-version: set each crate\'s rust-version to what its tree needs (above)');
  process.exit(1);
}
