/**
 * The access log (one JSON line per request, whatever its outcome), audit lines for changes,
 * and no secret in any log line; CORS on a real server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cli } from '../support/cli.ts'
import { ADMIN_TOKEN as ADMIN } from '../support/config-doc.ts'
import { bearer, PLANS, startGateway, type TestGateway, tempDir, testConfigDoc } from '../support/gateway.ts'
import { writeConfig } from '../support/process.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      server: { host: '127.0.0.1', port: 0, cors_origins: ['https://app.example.com'] },
      plans: { ...PLANS, tiny: { rpm: 2, rpd: null, models: ['*'] } },
    }),
  })
})
afterAll(() => gw.stop())

const chat = (key: string, body: Record<string, unknown>) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'hello there' }],
      ...body,
    }),
  })

const accessLines = () =>
  gw.logs
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'access' && l.surface !== 'health' && l.surface !== 'metrics')

describe('access log', () => {
  test('ten requests → ten access lines with the right fields; no key material in any line', async () => {
    const { key, id } = await gw.key('logged', 'tiny')
    const before = accessLines().length
    const statuses: number[] = []
    const push = async (r: Promise<Response>) => {
      const res = await r
      await res.arrayBuffer()
      statuses.push(res.status)
      return res
    }
    await push(chat(key, {})) // 200
    await push(chat(key, { stream: true, stream_options: { include_usage: true } })) // 200 stream
    await push(chat(key, {})) // 429 (rpm 2)
    await push(chat('sk-sy-not-a-real-key-000000000000', {})) // 401
    await push(chat(key, { model: 'nope' })) // 400
    await push(fetch(`${gw.url}/v1/models`, { headers: bearer(key) })) // 200
    await push(fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })) // 200
    await push(fetch(`${gw.url}/no-such-route`)) // 404
    await push(fetch(`${gw.url}/admin/v1/accounts`, { headers: bearer(ADMIN) })) // 200
    await push(fetch(`${gw.url}/admin/v1/accounts`, { headers: bearer('wrong') })) // 401
    expect(statuses).toEqual([200, 200, 429, 401, 400, 200, 200, 404, 200, 401])

    // A line is written once the response has gone out, which the client may see first.
    for (let i = 0; i < 50 && accessLines().length < before + 10; i++) await Bun.sleep(20)
    const lines = accessLines().slice(before)
    expect(lines).toHaveLength(10)
    expect(lines.map((l) => l.status)).toEqual(statuses)
    for (const l of lines) {
      expect(l.level).toBe('info')
      expect(l.request_id).toMatch(/^req_/)
      expect(typeof l.latency_ms).toBe('number')
      for (const f of [
        'surface',
        'account',
        'key_prefix',
        'model',
        'ttft_ms',
        'prompt_tokens',
        'completion_tokens',
      ]) {
        expect(l).toHaveProperty(f)
      }
    }
    const [ok, stream, limited] = lines
    const prefix = key.slice(0, 12)
    expect(ok).toMatchObject({
      surface: 'chat',
      account: 'logged',
      key_prefix: prefix,
      model: 'demo/echo',
      stream: false,
    })
    expect(ok.prompt_tokens).toBeGreaterThan(0)
    expect(ok.completion_tokens).toBeGreaterThan(0)
    expect(stream).toMatchObject({ surface: 'chat', model: 'demo/echo', stream: true, status: 200 })
    expect(stream.ttft_ms).toBeGreaterThanOrEqual(0)
    expect(stream.completion_tokens).toBeGreaterThan(0)
    expect(limited).toMatchObject({ status: 429, account: 'logged', model: 'demo/echo' })
    expect(lines[3]).toMatchObject({ status: 401, account: null })
    expect(lines.map((l) => l.surface)).toEqual([
      'chat',
      'chat',
      'chat',
      'chat',
      'chat',
      'models',
      'usage',
      'other',
      'admin',
      'admin',
    ])

    // Rotating prints a new secret: neither it nor any other key, hash or token may be logged.
    const rotated = await (
      await fetch(`${gw.url}/admin/v1/keys/${id}/rotate`, { method: 'POST', headers: bearer(ADMIN) })
    ).json()
    // The admin change → an audit line naming who (the admin token) and what.
    for (let i = 0; i < 50 && !gw.logs.some((l) => l.includes('"audit"') && l.includes('/rotate')); i++) {
      await Bun.sleep(20)
    }
    const auditLine = gw.logs
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'audit' && String(l.path).endsWith('/rotate'))
    expect(auditLine).toMatchObject({
      actor: 'admin_token',
      action: 'POST /admin/v1/keys/:id/rotate',
      target: id,
      path: `/admin/v1/keys/${id}/rotate`,
      outcome: 'ok',
    })
    const secrets = [key, (rotated as { key: string }).key, ADMIN, 'sk-sy-not-a-real-key']
    for (const line of gw.logs) {
      for (const s of secrets) expect(line).not.toContain(s)
      expect(line).not.toMatch(/sk-sy-[A-Za-z0-9]{20,}/)
    }
  })

  test('logging.access: false writes no access lines', async () => {
    const quiet = await startGateway({ doc: testConfigDoc({ logging: { access: false } }) })
    try {
      const { key } = await quiet.key('q', 'free')
      await (await fetch(`${quiet.url}/v1/models`, { headers: bearer(key) })).arrayBuffer()
      expect(quiet.logs.filter((l) => l.includes('"access"'))).toEqual([])
    } finally {
      await quiet.stop()
    }
  })

  test('a change from the command line → an audit line (actor cli) on stderr, without the key', async () => {
    const dir = tempDir()
    const base = ['--config', writeConfig(dir, testConfigDoc())]
    expect((await cli(['accounts', 'create', 'audited', '--plan', 'free', ...base])).code).toBe(0)
    const created = await cli(['keys', 'create', 'audited', '--json', ...base])
    const key = created.json().key as string
    const line = JSON.parse(created.stderr.trim().split('\n').at(-1)!)
    expect(line).toMatchObject({
      msg: 'audit',
      actor: 'cli',
      action: 'keys create',
      target: 'audited',
      outcome: 'ok',
    })
    expect(created.stderr).not.toContain(key)
    const refused = await cli(['keys', 'revoke', 'key_missing', ...base])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('"outcome":"key_not_found"')
  })
})

describe('CORS', () => {
  const preflight = (origin: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })

  test('a preflight from an allowed origin succeeds; from another it is refused', async () => {
    const ok = await preflight('https://app.example.com')
    expect(ok.status).toBe(204)
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST')
    expect(ok.headers.get('access-control-allow-headers')).toContain('authorization')
    const no = await preflight('https://evil.example.net')
    expect(no.status).toBe(403)
    expect(no.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('responses to an allowed origin expose the rate-limit and retry headers, and the attempts header', async () => {
    const { key } = await gw.key('browser', 'free')
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json', origin: 'https://app.example.com' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    const exposed = res.headers.get('access-control-expose-headers')!
    const names = exposed.split(', ')
    for (const h of [
      'retry-after',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-requests',
      'x-request-id',
      'request-id',
      'x-should-retry',
      'x-switchyard-attempts',
      // The token headers (DESIGN §11), Anthropic's names on Messages, the output allowance.
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
      'x-ratelimit-remaining-tokens-day',
      'anthropic-ratelimit-requests-remaining',
      'anthropic-ratelimit-tokens-remaining',
      'anthropic-ratelimit-tokens-reset',
      'x-switchyard-max-tokens',
      'x-switchyard-max-tokens-reason',
    ]) {
      expect(names).toContain(h)
    }
    expect(res.headers.get('x-switchyard-attempts')).toBe('1')
    const other = await fetch(`${gw.url}/healthz`, { headers: { origin: 'https://evil.example.net' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
})
