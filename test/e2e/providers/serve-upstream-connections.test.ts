import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { cli } from '../../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../../support/process.ts'

let serve: ServeProcess | undefined

function rawHttp(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (s) => void s.write(request),
        data: (_s, d) => {
          text += new TextDecoder().decode(d)
        },
        close: () => resolve(text),
        error: (_s, e) => reject(e),
      },
    }).catch(reject)
  })
}
const mock = await startMockUpstream()
afterAll(async () => {
  await serve?.kill('SIGKILL')
  await mock.stop()
})

// Bun's fetch opens at most 256 connections unless BUN_CONFIG_MAX_HTTP_REQUESTS is set when the
// process starts; `serve` re-runs itself with it set, so long streams beyond 256 are not queued.
test('a serve process relays more than 256 upstream streams at once', async () => {
  const dir = tempDir()
  const doc = testConfigDoc({
    providers: [
      {
        prefix: 'mock',
        kind: 'openai',
        base_url: mock.url,
        api_key: 'x',
        models: [
          {
            name: 'slow-first-3000ms',
            context_window: 1000,
            max_output_tokens: 100,
            features: ['streaming'],
          },
        ],
      },
    ],
    plans: { ...PLANS, unlimited: { rpm: null, rpd: null, models: ['*'] } },
    default_plan: 'unlimited',
  })
  const base = ['--config', writeConfig(dir, doc), '--db', join(dir, 'db.sqlite')]
  await cli(['accounts', 'create', 'many', ...base])
  const { key } = (await cli(['keys', 'create', 'many', '--json', ...base])).json()
  serve = await spawnServe(['--port', '0', ...base])
  const N = 400
  const body = JSON.stringify({
    model: 'mock/slow-first-3000ms',
    stream: true,
    messages: [{ role: 'user', content: 'hi' }],
  })
  const request =
    `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\n` +
    `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`
  // Raw sockets: this test process's own fetch is capped at 256 connections too.
  const streams = Array.from({ length: N }, () => rawHttp(serve!.port, request))
  for (let i = 0; i < 40 && mock.stats.requests < N; i++) await Bun.sleep(50)
  // All 400 reached the upstream while the first ones were still waiting for their first token.
  expect(mock.stats.requests).toBe(N)
  const bodies = await Promise.all(streams)
  expect(bodies.every((b) => b.includes('data: [DONE]'))).toBe(true)
}, 20_000) // 3 s first token + 400 streams: about 5 s on a loaded 2-core machine
