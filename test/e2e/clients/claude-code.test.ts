/**
 * Claude Code itself, in print mode, against the real gateway on port 0 (DESIGN §6): a turn on
 * the demo model, through an anthropic provider replaying the recordings (text, tool, thinking),
 * through an openai provider on the mock upstream, and a tool round trip where Claude Code runs
 * the tool. Every request it sends is counted once in /v1/usage.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CLAUDE, reportClaudeAbsent, runClaude } from '../../support/claude-code.ts'
import { type MessagesBed, startMessagesBed } from '../../support/messages-bed.ts'

reportClaudeAbsent('test/e2e/clients/claude-code.test.ts (6 tests)')

let bed: MessagesBed

beforeAll(async () => {
  if (CLAUDE) bed = await startMessagesBed({ expectBeta: null })
})
afterAll(async () => {
  await bed?.stop()
})

async function usageCount(key: string): Promise<number> {
  // Outcomes are written in batches; the admission row is what counts and it is synchronous.
  const res = await fetch(`${bed.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  const body = (await res.json()) as { usage: { current_day: { requests: number } } }
  return body.usage.current_day.requests
}

async function turn(account: string, prompt: string, model: string, extra: string[] = []) {
  const { key } = await bed.gw.key(account, 'unlimited')
  const run = await runClaude(bed.gw.url, key, prompt, model, extra)
  if (run.code !== 0) console.log(`claude exited ${run.code}\n${run.stdout}\n${run.stderr}`)
  expect(run.code).toBe(0)
  return { ...run, key }
}

describe.skipIf(!CLAUDE)('Claude Code through Switchyard', () => {
  test('completes a turn on the demo model, offline', async () => {
    const run = await turn('cc-demo', 'say hi', 'demo/agent')
    expect(run.stdout).toContain('Echo:')
    expect(run.stdout).toContain('say hi')
    expect(await usageCount(run.key)).toBe(1)
  }, 120_000)

  for (const fixture of ['text', 'thinking'] as const) {
    test(`completes a turn through an anthropic provider (recorded ${fixture} stream)`, async () => {
      const before = bed.anthropic.requests().length
      const run = await turn(`cc-anthropic-${fixture}`, 'hello', `anthropic/${fixture}`)
      const seen = bed.anthropic.requests().slice(before)
      expect(seen.length).toBe(1)
      // Claude Code's own beta header and version reached the upstream verbatim.
      expect(seen[0]!.headers['anthropic-beta']).toContain('claude-code-')
      expect(seen[0]!.headers['anthropic-version']).toBe('2023-06-01')
      expect(seen[0]!.body.model).toBe(fixture)
      expect(run.stdout.trim().length).toBeGreaterThan(0)
      if (fixture === 'thinking') expect(run.stdout).toContain('185')
      expect(await usageCount(run.key)).toBe(1)
    }, 120_000)
  }

  test('anthropic tool stream: the tool call, its tool_result on the second request, the final answer', async () => {
    const before = bed.anthropic.requests().length
    const run = await turn('cc-anthropic-tool', 'format this as json', 'anthropic/tool')
    const seen = bed.anthropic.requests().slice(before)
    expect(seen.length).toBe(2)
    const lastTurn = seen[1]!.body.messages.at(-1).content
    expect(lastTurn.some((b: { type: string }) => b.type === 'tool_result')).toBe(true)
    // The second answer is the recorded text stream.
    expect(run.stdout).toContain('Hello')
    expect(await usageCount(run.key)).toBe(2)
  }, 120_000)

  test('completes a turn through an openai provider on the mock upstream', async () => {
    bed.mock.reset()
    // The mock calls two of the offered tools, then answers once their results come back.
    const run = await turn('cc-openai', 'hello', 'mock/gpt-4o-mini')
    expect(run.stdout).toContain('Hello from the mock')
    expect(bed.mock.stats.requests).toBe(2)
    const last = (bed.mock.stats.lastBody as { messages: Array<{ role: string }> }).messages.at(-1)
    expect(last?.role).toBe('tool')
    expect(await usageCount(run.key)).toBe(2)
  }, 120_000)

  test('tool round trip on the demo model: Claude Code runs Bash, the tool_result comes back, the answer arrives', async () => {
    const marker = `switchyard-roundtrip-${process.pid}`
    const run = await turn(
      'cc-roundtrip',
      `Run Bash with {"command": "echo ${marker}", "description": "Print a marker"}`,
      'demo/agent',
      ['--allowedTools', 'Bash'],
    )
    // The demo says this only when the last turn is the tool's result, so the second request
    // carried a tool_result holding the command's output.
    expect(run.stdout).toContain(`Tool result received: ${marker}`)
    expect(await usageCount(run.key)).toBe(2)
  }, 120_000)
})
