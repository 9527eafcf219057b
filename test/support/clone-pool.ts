/**
 * @module
 * Clones of the migrated template, used again (shared-engines.ts hands them out). A clone a file
 * used is retired when the file releases it and restored to the template's state when a test asks
 * for one again, instead of being dropped and a new one made: a clone (`CREATE DATABASE …
 * TEMPLATE`) and its `DROP … WITH (FORCE)` cost the server ~100–350 ms of CPU on this machine,
 * retiring and restoring one ~15–40 (docs/benchmarks/suite-cpu.md, stop 60).
 *
 * What the next test gets is the template's state, or a new clone:
 * - No session of the last test's survives. Each clone is handed out under a login role of its
 *   own (a superuser, as `postgres` is); retiring it takes the role's login, terminates every
 *   session in the database and of the role (and waits for them), then drops the role — so a
 *   client the test left running cannot reconnect into the next test's rows, and what lives in a
 *   session (advisory locks, LISTEN, temporary tables, prepared statements) ends with it.
 * - The schema is the template's: the role must own nothing, and a fingerprint of the catalogs
 *   (relations, columns, defaults, functions, constraints, triggers, indexes, types, sequences,
 *   rules, settings, …) must equal the template's; otherwise the clone is dropped.
 * - The rows are the template's: every table written to (a non-empty file) and every table the
 *   migrations wrote rows into is truncated (a new, empty file, as in a new clone), those rows
 *   are written back, every sequence is set back to the template's value, and the planner's
 *   statistics and the activity counters are cleared.
 * A keeper connection (`postgres`'s) to each clone restores it and stays open, idle, while the
 * clone is in use: opening one each time would cost another backend (~50 ms).
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

/**
 * The keeper connections of this module instance, by database, and their backends' pids (one
 * registry per worker under `--no-isolate`; under `--isolate` Bun closes them when a file ends).
 */
const keepers = new Map<string, { sql: SQL; pid: number }>()

/** Closes a clone's keeper (the clone is about to be dropped). */
export async function forget(db: string): Promise<void> {
  const keeper = keepers.get(db)
  keepers.delete(db)
  await keeper?.sql.close().catch(() => {})
}

/** Client sessions other than `keeper`'s and the caller's, in database $1 or of role $2. */
const OTHERS = `FROM pg_stat_activity WHERE backend_type = 'client backend'
  AND (datname = $1 OR usename = $2) AND pid <> $3 AND pid <> pg_backend_pid()`

/** Terminates them, waiting for each to end; false if one did not within 5 s. */
async function terminateOthers(admin: SQL, db: string, role: string, keeper: number): Promise<boolean> {
  const left = await admin.unsafe(`SELECT pg_terminate_backend(pid, 5000) AS gone ${OTHERS}`, [
    db,
    role,
    keeper,
  ])
  return left.every((r: { gone: boolean }) => r.gone)
}

/**
 * Ends what a test left in a clone it used under `role`, when its file releases it: the role's
 * login is taken, every session in the clone or of the role is terminated (but the keeper's), and
 * the role is dropped — a client left running cannot reconnect. False when that fails, or the
 * role owns something (a table the test made): the clone is then to be dropped. Its rows stay
 * until `restore`, so that a clone no test asks for again (the last file of a worker, a file run
 * alone) costs no more than this.
 */
export async function retire(admin: SQL, db: string, role: string): Promise<boolean> {
  try {
    await admin.unsafe(`ALTER ROLE ${ident(role)} NOLOGIN`)
    if (!(await terminateOthers(admin, db, role, keepers.get(db)?.pid ?? 0))) return false
    await admin.unsafe(`DROP ROLE ${ident(role)}`)
    return true
  } catch {
    return false
  }
}

/**
 * Puts a retired clone back into the template's state, before it is handed out again; false when
 * it cannot be (its schema is not the template's): the caller then drops it. `admin` is a
 * connection to the `postgres` database; `url` makes a URL for `postgres` to a database.
 */
export async function restore(
  admin: SQL,
  url: (db: string) => string,
  db: string,
  facts: TemplateFacts,
): Promise<boolean> {
  try {
    let keeper = keepers.get(db)
    if (!keeper) {
      keeper = { sql: new SQL(url(db), { max: 1 }), pid: 0 }
      keepers.set(db, keeper)
    }
    const sql = keeper.sql
    // Read each time: Bun reconnects a connection the server closed, under a new pid.
    keeper.pid = (await sql.unsafe('SELECT pg_backend_pid() AS pid'))[0].pid as number
    // A session that was logging in as the last test's role while it was retired.
    if (!(await terminateOthers(admin, db, '', keeper.pid))) return false
    const [{ fp }] = await sql.unsafe(FINGERPRINT)
    if (fp !== facts.fingerprint) return false
    await sql.begin(async (tx) => {
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
    await sql.unsafe('SELECT pg_stat_reset()')
    return true
  } catch {
    return false
  }
}
