/**
 * Session affinity end to end (DESIGN §14): a real gateway before the fault upstream, provider
 * `prime` a pool of two keys. An agent session's turns — by OpenAI's `prompt_cache_key`, Codex's
 * `session-id` header, Claude Code's `x-claude-code-session-id` — reach one key, 12 of 12, while
 * different sessions spread over both; when its key rests the session moves to the other key and
 * stays there after the rest ends.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { beforeEach } from '../../../support/hooks.ts'
import { KEY_A, KEY_B, type ResilienceBed, startResilienceBed } from '../../../support/resilience-bed.ts'

let bed: ResilienceBed
beforeAll(async () => {
  // A virtual model over two models of the bed: a session keeps one target too.
  bed = await startResilienceBed({
    aliases: [
      {
        id: 'team/coder',
        to: [
          { model: 'prime/gpt-solo', weight: 1 },
          { model: 'spare/gpt-s', weight: 1 },
        ],
      },
    ],
  })
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

type Turn = { body?: Record<string, unknown>; headers?: Record<string, string> }

/** One turn on `surface` for `prime/gpt-solo`, with the session's body fields and headers. */
async function turn(
  surface: 'chat' | 'responses' | 'messages',
  t: Turn,
  model = 'prime/gpt-solo',
): Promise<void> {
  const base = { model, ...t.body }
  const [path, body, auth] =
    surface === 'chat'
      ? [
          '/v1/chat/completions',
          { ...base, messages: [{ role: 'user', content: 'hi' }] },
          { authorization: `Bearer ${bed.key}` },
        ]
      : surface === 'responses'
        ? ['/v1/responses', { ...base, input: 'hi' }, { authorization: `Bearer ${bed.key}` }]
        : [
            '/v1/messages',
            { ...base, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
            { 'x-api-key': bed.key, 'anthropic-version': '2023-06-01' },
          ]
  const res = await fetch(`${bed.gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth, ...t.headers },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  await res.text()
}

/** The keys the upstream saw, in order, from attempt `from` on. */
const keysSeen = (from = 0) =>
  bed.up
    .attempts()
    .slice(from)
    .map((a) => a.key)

describe('session affinity over a pool of two keys', () => {
  const sessions: Array<[string, 'chat' | 'responses' | 'messages', (id: string) => Turn]> = [
    ['prompt_cache_key (chat)', 'chat', (id) => ({ body: { prompt_cache_key: id } })],
    // Codex 0.169 sends both; the header alone must do.
    ['Codex session-id header (Responses)', 'responses', (id) => ({ headers: { 'session-id': id } })],
    [
      'Claude Code x-claude-code-session-id (Messages)',
      'messages',
      (id) => ({ headers: { 'x-claude-code-session-id': id } }),
    ],
  ]
  for (const [name, surface, carry] of sessions) {
    test(`one session's 12 turns on one key, 12 of 12: ${name}`, async () => {
      for (let i = 0; i < 12; i++) await turn(surface, carry('f03bdc6c-8479-4c90-896b-36015212f691'))
      const seen = keysSeen()
      expect(seen).toHaveLength(12)
      expect(seen.filter((k) => k === seen[0]).length).toBe(12)
    })
  }

  test('different sessions spread over both keys, each on its own one throughout', async () => {
    // Seven: an odd count, so a round-robin would put a session's turns on alternate keys.
    const ids = Array.from({ length: 7 }, (_, i) => `session-${i}`)
    for (let round = 0; round < 3; round++)
      for (const id of ids) await turn('chat', { body: { prompt_cache_key: id } })
    const seen = keysSeen()
    expect(new Set(seen)).toEqual(new Set([KEY_A, KEY_B]))
    ids.forEach((_, s) => {
      const own = [seen[s], seen[s + 7], seen[s + 14]]
      expect(new Set(own).size).toBe(1)
    })
  })

  test('requests without a session keep the weighted round-robin', async () => {
    for (let i = 0; i < 4; i++) await turn('chat', {})
    expect(new Set(keysSeen())).toEqual(new Set([KEY_A, KEY_B]))
  })

  test('failover moves a session when its key rests, and it stays there after the rest ends', async () => {
    const id = { body: { prompt_cache_key: 'moving-session' } }
    await turn('chat', id)
    const home = keysSeen()[0]!
    const other = home === KEY_A ? KEY_B : KEY_A
    // Its key's credentials fail: the key rests for the cooldown (1 s here) and the turn goes on the other.
    bed.up.script({ key: home }, 'unauthorized')
    await turn('chat', id)
    expect(keysSeen(1)).toEqual([home, other])
    for (let i = 0; i < 3; i++) await turn('chat', id)
    expect(keysSeen(3)).toEqual([other, other, other])
    // The home key has woken (and answers again): the session stays where its cache now is.
    bed.up.clear()
    await Bun.sleep(1_100)
    for (let i = 0; i < 4; i++) await turn('chat', id)
    expect(keysSeen()).toEqual([other, other, other, other])
  })

  test('a virtual model: one session on one target, 12 of 12, while sessions spread over both', async () => {
    for (let i = 0; i < 12; i++)
      await turn('chat', { body: { prompt_cache_key: 'coder-session' } }, 'team/coder')
    const models = bed.up.attempts().map((a) => a.model)
    expect(models).toHaveLength(12)
    expect(models.filter((m) => m === models[0]).length).toBe(12)
    bed.up.clear()
    const ids = Array.from({ length: 7 }, (_, i) => `coder-${i}`)
    for (let round = 0; round < 2; round++)
      for (const id of ids) await turn('chat', { body: { prompt_cache_key: id } }, 'team/coder')
    const seen = bed.up.attempts().map((a) => a.model)
    expect(new Set(seen)).toEqual(new Set(['gpt-solo', 'gpt-s']))
    for (let s = 0; s < ids.length; s++) expect(seen[s + 7]).toBe(seen[s]!)
  })
})
