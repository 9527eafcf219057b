/**
 * What `serve` says when it starts, and when it cannot. The README's logs ("JSON lines on
 * stderr ... start, shutdown") had shutdown lines but no start: a log collector saw a gateway
 * stop that it never saw start, nor on which address and database it served.
 */
import { expect, test } from 'bun:test'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { spawnServe, writeConfig } from '../support/process.ts'

test('the start is a JSON log line on stderr: url, workers, database, pid, version', async () => {
  const dir = tempDir()
  const config = writeConfig(dir, testConfigDoc())
  const serve = await spawnServe(['--port', '0', '--config', config])
  expect(await serve.kill('SIGTERM')).toBe(0)
  const lines = (await new Response(serve.proc.stderr as ReadableStream).text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
  const start = lines.find((l) => l.msg === 'listening')
  expect(start).toMatchObject({ level: 'info', url: serve.url, workers: 1, pid: serve.pid })
  expect(start.database).toContain(dir)
  expect(typeof start.version).toBe('string')
  expect(lines.indexOf(start)).toBeLessThan(lines.findIndex((l) => l.msg === 'shutting down'))
}, 30_000)
