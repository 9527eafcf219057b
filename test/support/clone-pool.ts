/**
 * @module
 * Clones of the migrated template, used again (shared-engines.ts hands them out). When a file is
 * done with its clones, each is put back into the template's state and kept for the next test,
 * instead of being dropped and a new one made: a clone (`CREATE DATABASE … TEMPLATE`) and its
 * `DROP … WITH (FORCE)` cost the server ~110–220 ms of CPU on this machine, putting one back
 * ~25 (docs/benchmarks/suite-cpu.md, stop 60).
 *
 * What the next test gets is the template's state, or a new clone:
 * - No session of the last test's survives. Each clone is handed out under a login role of its
 *   own (a superuser, as `postgres` is); the role loses its login, then every session in the
 *   database and of the role is terminated (and waited for), then the role is dropped — so a
 *   client the test left running cannot reconnect into the next test's rows, and what lives in a
 *   session (advisory locks, LISTEN, temporary tables, prepared statements) ends with it.
 * - The schema is the template's: a fingerprint of the catalogs (relations, columns, defaults,
 *   functions, constraints, triggers, indexes, types, sequences, rules, settings, …) must equal
 *   the template's, and the role must own nothing; otherwise the clone is dropped.
 * - The rows are the template's: every table written to (a non-empty file) and every table the
 *   migrations wrote rows into is truncated (a new, empty file, as in a new clone), those rows
 *   are written back, every sequence is set back to the template's value, and the planner's
 *   statistics and the activity counters are cleared.
 * A keeper connection (`postgres`'s) to each clone does this and stays open while the clone is in
 * use, idle: opening one each time would cost another backend (~50 ms).
 */
import { SQL } from 'bun'

/** What a clone must match to be the template again; read from the template once it is migrated. */
export interface TemplateFacts {
  fingerprint: string
  /** The rows the migrations wrote, by table. */
  seeds: Record<string, unknown[]>
  /** Every sequence's state. */
  sequences: Array<{ name: string; last: string; called: boolean }>
}

/**
 * The catalogs' definitions (not their physical state: file numbers, sizes, statistics). Objects
 * from 16384 (FirstNormalObjectId) on: whatever a test creates or replaces gets a new one.
 */
const FINGERPRINT = `
SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS fp FROM (
  SELECT format('class %s %s %s %s %s %s %s', oid, relname, relnamespace, relkind, relnatts, relacl, reloptions) AS x FROM pg_class WHERE oid >= 16384
  UNION ALL SELECT format('att %s %s %s %s %s %s %s', attrelid, attnum, attname, atttypid, atttypmod, attnotnull, attisdropped) FROM pg_attribute WHERE attrelid >= 16384
  UNION ALL SELECT format('def %s %s', oid, pg_get_expr(adbin, adrelid)) FROM pg_attrdef
  UNION ALL SELECT format('proc %s %s %s %s %s', oid, proname, pronamespace, md5(prosrc), proconfig) FROM pg_proc WHERE oid >= 16384
  UNION ALL SELECT format('con %s %s %s', oid, conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE oid >= 16384
  UNION ALL SELECT format('trg %s %s %s %s', oid, tgname, tgenabled, tgfoid) FROM pg_trigger
  UNION ALL SELECT format('idx %s %s', indexrelid, pg_get_indexdef(indexrelid)) FROM pg_index WHERE indexrelid >= 16384
  UNION ALL SELECT format('ns %s %s %s', oid, nspname, nspacl) FROM pg_namespace
  UNION ALL SELECT format('type %s %s %s', oid, typname, typnamespace) FROM pg_type WHERE oid >= 16384
  UNION ALL SELECT format('seq %s %s %s %s %s %s', seqrelid, seqstart, seqincrement, seqmin, seqmax, seqcache) FROM pg_sequence
  UNION ALL SELECT format('rule %s %s %s', oid, rulename, ev_enabled) FROM pg_rewrite WHERE oid >= 16384
  UNION ALL SELECT format('ext %s %s', oid, extname) FROM pg_extension
  UNION ALL SELECT format('set %s', setconfig) FROM pg_db_role_setting
    WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  UNION ALL SELECT format('lo %s', oid) FROM pg_largeobject_metadata
  UNION ALL SELECT format('policy %s', oid) FROM pg_policy
  UNION ALL SELECT format('evt %s %s', oid, evtenabled) FROM pg_event_trigger
  UNION ALL SELECT format('pub %s', oid) FROM pg_publication
  UNION ALL SELECT format('acl %s', oid) FROM pg_default_acl
  UNION ALL SELECT format('depend %s', count(*)) FROM pg_depend
) f`

const PUBLIC_TABLES = `SELECT relname AS name FROM pg_class
  WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') ORDER BY relname`

/** Table and sequence names come from the catalog, but are quoted all the same. */
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`

export async function templateFacts(url: string): Promise<TemplateFacts> {
  const sql = new SQL(url, { max: 1 })
  try {
    const [{ fp }] = await sql.unsafe(FINGERPRINT)
    const seeds: Record<string, unknown[]> = {}
    for (const { name } of await sql.unsafe(PUBLIC_TABLES)) {
      const [{ rows }] = await sql.unsafe(`SELECT COALESCE(json_agg(t), '[]') AS rows FROM ${ident(name)} t`)
      const list = typeof rows === 'string' ? JSON.parse(rows) : rows
      if (list.length) seeds[name] = list
    }
    const sequences = (
      await sql.unsafe(`SELECT c.relname AS name FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'S' ORDER BY 1`)
    ).map((r: { name: string }) => r.name) as string[]
    const states = []
    for (const name of sequences) {
      const [s] = await sql.unsafe(`SELECT last_value::text AS last, is_called AS called FROM ${ident(name)}`)
      states.push({ name, last: s.last as string, called: s.called as boolean })
    }
    return { fingerprint: fp as string, seeds, sequences: states }
  } finally {
    await sql.close()
  }
}

/** The keeper connections of this module instance, by database (one registry per worker under `--no-isolate`). */
const keepers = new Map<string, SQL>()

/** Closes a clone's keeper (the clone is about to be dropped). */
export async function forget(db: string): Promise<void> {
  const keeper = keepers.get(db)
  keepers.delete(db)
  await keeper?.close().catch(() => {})
}

/**
 * Puts a clone a test used (under `role`) back into the template's state; false when it cannot
 * be (the caller then drops it and the role). `admin` is a connection to the `postgres` database;
 * `url` makes a URL for `postgres` to a database.
 */
export async function restore(
  admin: SQL,
  url: (db: string) => string,
  db: string,
  role: string,
  facts: TemplateFacts,
): Promise<boolean> {
  try {
    await admin.unsafe(`ALTER ROLE ${ident(role)} NOLOGIN`)
    let keeper = keepers.get(db)
    if (!keeper) {
      keeper = new SQL(url(db), { max: 1 })
      keepers.set(db, keeper)
    }
    const [{ pid }] = await keeper.unsafe('SELECT pg_backend_pid() AS pid')
    // Client sessions other than the keeper's (and this one), in the clone or of the role.
    const others = `FROM pg_stat_activity WHERE backend_type = 'client backend'
      AND (datname = $1 OR usename = $2) AND pid <> $3 AND pid <> pg_backend_pid()`
    const ended = async () => {
      const left = await admin.unsafe(`SELECT pg_terminate_backend(pid, 5000) AS gone ${others}`, [
        db,
        role,
        pid,
      ])
      return left.every((r: { gone: boolean }) => r.gone)
    }
    if (!(await ended())) return false
    // Nothing can log in as it now. A role that owns something (a table the test made) cannot be
    // dropped: the clone is not kept.
    await admin.unsafe(`DROP ROLE ${ident(role)}`)
    const [{ fp }] = await keeper.unsafe(FINGERPRINT)
    if (fp !== facts.fingerprint) return false
    await keeper.begin(async (tx) => {
      const written = (
        await tx.unsafe(
          `SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace
           AND relkind IN ('r', 'p') AND (pg_relation_size(oid) > 0 OR relname = ANY($1))`,
          [Object.keys(facts.seeds)],
        )
      ).map((r: { name: string }) => ident(r.name))
      if (written.length) await tx.unsafe(`TRUNCATE ${written.join(', ')} CASCADE`)
      for (const [table, rows] of Object.entries(facts.seeds))
        await tx.unsafe(
          `INSERT INTO ${ident(table)} SELECT * FROM json_populate_recordset(NULL::${ident(table)}, $1::text::json)`,
          [JSON.stringify(rows)],
        )
      for (const s of facts.sequences)
        await tx.unsafe(`SELECT setval($1::regclass, $2::bigint, $3)`, [ident(s.name), s.last, s.called])
      await tx.unsafe(
        `DELETE FROM pg_statistic WHERE starelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)`,
      )
    })
    await keeper.unsafe('SELECT pg_stat_reset()')
    // A session that was logging in as the role while it was taken may have come in since.
    const [{ n }] = await admin.unsafe(`SELECT count(*)::int AS n ${others}`, [db, role, pid])
    return n === 0
  } catch {
    return false
  }
}
