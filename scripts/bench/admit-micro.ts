/**
 * @module
 * The SQLite admission of a governed request beside a plain one's, in process (issues 41, 46): one
 * store on a file (this checkout's src, or `--root` another's), two accounts — one without limits,
 * one under the tokens row's plan (TPM + TPD + a monthly budget, `METERED_PLAN`) — and `store.admit`
 * of each in turn, awaited one at a time (each its own group commit, as at c=1) or `--batch B` at
 * once (one commit for B, as under load). Interleaved rounds; prints the CPU µs an admission of
 * each (the loop's: this process has no other work) and, with `--settle`, of the settlement and
 * outcome record in the usage flush (`store.complete`: this store runs no usage writer thread, so
 * the batch is written on the loop's connection, in `complete`'s own transaction).
 *
 * bun scripts/bench/admit-micro.ts [--rounds N] [--n N] [--batch B] [--root CHECKOUT] [--only plain|metered] [--count] [--settle]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { option } from './argv.ts'

const rounds = Number(option('--rounds') ?? 15)
const n = Number(option('--n') ?? 2000)
const batch = Number(option('--batch') ?? 1)
/** One kind alone (`plain` or `metered`): for a profile or a trace of one. */
const only = option('--only')
const root = resolve(option('--root') ?? join(import.meta.dir, '..', '..'))

const { openSqliteStore } = await import(join(root, 'src/store/index.ts'))

/** `--count`: the statements an admission runs (bun:sqlite's run/get/all/values calls, by SQL's first words). */
const counting = process.argv.includes('--count')
const counts = new Map<string, number>()
if (counting) {
  // A statement's methods are its own (bun:sqlite 1.4), so each statement is wrapped as it is made.
  const { Database } = await import('bun:sqlite')
  const proto = Database.prototype as unknown as Record<string, (...a: unknown[]) => unknown>
  for (const make of ['query', 'prepare']) {
    const original = proto[make]!
    proto[make] = function (this: unknown, ...args: unknown[]) {
      const st = original.apply(this, args) as Record<string, (...a: unknown[]) => unknown>
      const sql = String(args[0]).replace(/\s+/g, ' ').trim().slice(0, 70)
      for (const m of ['run', 'get', 'all', 'values']) {
        const f = st[m]!
        st[m] = (...a: unknown[]) => {
          counts.set(sql, (counts.get(sql) ?? 0) + 1)
          return f.apply(st, a)
        }
      }
      return st
    }
  }
}

const dir = mkdtempSync(join(tmpdir(), 'admit-micro-'))
const now0 = Date.now()
const store = openSqliteStore({ path: join(dir, 'db.sqlite'), now: now0 })
const account = async (name: string) =>
  (await store.createAccount({ name, plan: 'free', planStartedAt: now0, planExpiresAt: null, now: now0 })).id
const plainId = await account('plain')
const meteredId = await account('metered')

const rows = [
  { resource: 'tokens', window: 'minute', scope: 'account', capacity: 1_000_000_000 },
  { resource: 'tokens', window: 'day', scope: 'account', capacity: 1_000_000_000_000 },
  {
    resource: 'microdollars',
    window: 'period',
    period: 'month',
    scope: 'account',
    capacity: 1_000_000_000_000,
  },
]
const price = { input: 150_000, output: 600_000 }
let seq = 0
const input = (metered: boolean) => ({
  accountId: metered ? meteredId : plainId,
  keyId: metered ? 'key_m' : 'key_p',
  model: 'mock/bench-priced',
  requestId: 'r',
  gatewayId: `g${seq++}`,
  surface: 'chat',
  stream: false,
  now: Date.now(),
  rpm: null,
  rpd: null,
  suspension: null,
  ...(metered ? { charge: { rows, inputTokens: 30, wantOutput: 64, price } } : {}),
})

const cpu = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** `--settle`: each admitted batch's outcomes (with their settlements) written after it, as the usage flush writes them. */
const settling = process.argv.includes('--settle')

/** The outcome the usage flush writes for an admission: 30 + 20 tokens, its reservation settled. */
function outcome(inp: ReturnType<typeof input>, r: AdmitResult) {
  const res = r.reservation
  return {
    gatewayId: r.gatewayId,
    requestId: inp.requestId,
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 30,
    completionTokens: 20,
    latencyMs: 1,
    ttftMs: null,
    errorCode: null,
    costMicros: res ? 17 : null,
    ...(res ? { settlement: { handle: res.handle, accountId: inp.accountId, tokens: 50, micros: 17 } } : {}),
    counted: { accountId: inp.accountId, keyId: inp.keyId, model: inp.model, at: r.loggedAt ?? inp.now },
  }
}
type AdmitResult = { gatewayId: string; loggedAt?: number; reservation?: { handle: unknown } }

async function run(metered: boolean, count: number): Promise<number> {
  const c0 = cpu()
  for (let i = 0; i < count; i += batch) {
    const inputs = Array.from({ length: batch }, () => input(metered))
    const results: AdmitResult[] = await Promise.all(inputs.map((x) => store.admit(x)))
    if (settling) await store.complete(inputs.map((x, k) => outcome(x, results[k]!)))
  }
  return (cpu() - c0) / count
}

if (counting) {
  for (const m of [false, true]) {
    await run(m, 200)
    counts.clear()
    await run(m, n)
    console.log(
      `${m ? 'metered' : 'plain'}: statements an admission (batch ${batch}), besides BEGIN and COMMIT:`,
    )
    for (const [sql, c] of counts) console.log(`  ${(c / n).toFixed(2)}  ${sql}`)
  }
  store.close()
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!
const kinds = only ? [only === 'metered'] : [false, true]
for (const m of kinds) await run(m, n)
const out = { plain: [] as number[], metered: [] as number[] }
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...kinds].reverse() : kinds
  for (const m of order) out[m ? 'metered' : 'plain'].push(await run(m, n))
}
const load = (await Bun.file('/proc/loadavg').text()).split(' ')[0]
const fig = (v: number[]) => (v.length ? `${median(v).toFixed(1)} µs (${Math.min(...v).toFixed(1)})` : '-')
console.log(
  `${root}: batch ${batch}, ${rounds} rounds of ${n}: plain ${fig(out.plain)}, metered ${fig(out.metered)}, load ${load}`,
)
store.close()
rmSync(dir, { recursive: true, force: true })
