'use strict';
/*
 * The queue's schema on connect: the Rust store's migration set `leasehold-queue` (ids
 * 1001…, one row each in leasehold_migrations), installed the way the Rust store installs
 * it: the missing migrations in id order, in one transaction, under the migration lock
 * (an advisory lock held to the commit), so two processes migrating at once take turns and
 * the second finds nothing to do. A database a newer build migrated, or whose recorded
 * migrations do not match these, is refused before anything changes; so is one that needs
 * migrating when the caller said not to, with what to do about it.
 */

class SchemaError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LeaseholdSchemaError';
  }
}

/**
 * What to install: the catalogue's migrations missing from `applied`, in id order, or why
 * not. `set` is the core's migration set: `{ namespace, idBlock, blockSize }`.
 */
function plan(migrations, applied, set) {
  const { namespace, idBlock, blockSize } = set;
  const known = new Map(migrations.map((m) => [idBlock + m.number, m]));
  const newest = Math.max(idBlock, ...known.keys());
  const ours = applied.filter((a) => a.id >= idBlock && a.id < idBlock + blockSize).sort((a, b) => a.id - b.id);
  for (const row of ours) {
    const m = known.get(row.id);
    if (m === undefined && row.id > newest) {
      const top = ours[ours.length - 1];
      throw new SchemaError(
        `the database's leasehold schema is newer than this package knows: migration ${top.id} (${top.name}) is applied, ` +
          `this package knows up to ${newest}. Upgrade the npm package leasehold to the version of the leasehold that migrated it.`,
      );
    }
    if (m === undefined || m.name !== row.name || row.namespace !== namespace) {
      throw new SchemaError(
        `the database's migration ${row.id} is recorded as ${row.namespace}/${row.name}, where this package has ` +
          `${namespace}/${m?.name ?? '(none)'}: it was not migrated by leasehold, or by a different build; nothing was changed.`,
      );
    }
  }
  const have = new Set(ours.map((a) => a.id));
  return [...known.entries()].filter(([id]) => !have.has(id)).sort((a, b) => a[0] - b[0]);
}

/**
 * Brings the schema up to date (`wanted`), or, with `wanted` false, checks it is. `run` is
 * queue.js's statement runner, `adapter.transaction` gives one connection; `set` is the core's
 * migration set (`{ namespace, idBlock, blockSize, lockKey }`, queue-policy.js).
 */
async function migrate(adapter, run, sql, set, wanted) {
  if (sql.migrations.length === 0) throw new Error('leasehold: this package was built without its migrations');
  if (!wanted) {
    let applied;
    try {
      applied = await run('migrations_applied');
    } catch (error) {
      throw new SchemaError(
        `the database has no leasehold schema (${error.message}). Connect once with { migrate: true } (the default) ` +
          'or run any writing `leasehold` command against it (e.g. `leasehold work --until-empty`) to create it.',
      );
    }
    const pending = plan(sql.migrations, applied.map(appliedRow), set);
    if (pending.length > 0) {
      throw new SchemaError(
        `the database's leasehold schema is older than this package's: ${pending.map(([, m]) => m.name).join(', ')} ` +
          'not applied. Connect once with { migrate: true } (the default) to apply them.',
      );
    }
    return;
  }
  await adapter.transaction(async (via) => {
    await run('migration_lock', { key: set.lockKey }, via); // bound as text: beyond 2^53
    await run('migrations_table', {}, via);
    const applied = (await run('migrations_applied', {}, via)).map(appliedRow);
    for (const [id, m] of plan(sql.migrations, applied, set)) {
      await via.script(m.text);
      await run('migration_record', { id, namespace: set.namespace, name: m.name }, via);
    }
  });
}

const appliedRow = (row) => ({ id: Number(row.id), namespace: row.namespace, name: row.name });

module.exports = { migrate, plan, SchemaError };
