/**
 * Claude Code itself, in print mode, against the real gateway on port 0 (DESIGN §6): a turn
 * through an anthropic provider replaying the recordings (text, thinking, and a tool stream whose
 * tool_result goes back), and through an openai provider on the mock upstream. Every request it
 * sends is counted once in /v1/usage. Claude Code on the demo model, a plain turn and a tool round
 * trip where it runs the tool, is readme-commands.test.ts's (the README's commands as pasted,
 * counted there too) and agents-commands.test.ts's (docs/agents.md's block): not run a third
 * time here. The runs are independent (an account and key each, the upstream's requests told
 * apart by model), so they run at once: each is mostly Claude Code starting up.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CLAUDE, reportClaudeAbsent, runClaude } from '../../support/claude-code.ts'
import { type MessagesBed, startMessagesBed } from '../../support/messages-bed.ts'

reportClaudeAbsent('test/e2e/clients/claude-code.test.ts (4 tests)')

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

/**
 * What reached the anthropic upstream as model `fixture` (one test's each): a model sent under
 * another name (the prefix kept, say) is found nowhere, and the test's count fails.
 */
function sentFor(fixture: string) {
  return bed.anthropic.requests().filter((r) => r.body.model === fixture)
}

async function turn(account: string, prompt: string, model: string, extra: string[] = []) {
  const { key } = await bed.gw.key(account, 'unlimited')
  const run = await runClaude(bed.gw.url, key, prompt, model, extra)
  if (run.code !== 0) console.log(`claude exited ${run.code}\n${run.stdout}\n${run.stderr}`)
  expect(run.code).toBe(0)
  return { ...run, key }
}

describe.skipIf(!CLAUDE)('Claude Code through Switchyard', () => {
  for (const fixture of ['text', 'thinking'] as const) {
    test.concurrent(`completes a turn through an anthropic provider (recorded ${fixture} stream)`, async () => {
      const run = await turn(`cc-anthropic-${fixture}`, 'hello', `anthropic/${fixture}`)
      const seen = sentFor(fixture)
      expect(seen.length).toBe(1)
      // Claude Code's own beta header and version reached the upstream verbatim.
      expect(seen[0]!.headers['anthropic-beta']).toContain('claude-code-')
      expect(seen[0]!.headers['anthropic-version']).toBe('2023-06-01')
      expect(run.stdout.trim().length).toBeGreaterThan(0)
      if (fixture === 'thinking') expect(run.stdout).toContain('185')
      expect(await usageCount(run.key)).toBe(1)
    }, 120_000)
  }

  test.concurrent('anthropic tool stream: the tool call, its tool_result on the second request, the final answer', async () => {
    const run = await turn('cc-anthropic-tool', 'format this as json', 'anthropic/tool')
    const seen = sentFor('tool')
    expect(seen.length).toBe(2)
    const lastTurn = seen[1]!.body.messages.at(-1).content
    expect(lastTurn.some((b: { type: string }) => b.type === 'tool_result')).toBe(true)
    // The second answer is the recorded text stream.
    expect(run.stdout).toContain('Hello')
    expect(await usageCount(run.key)).toBe(2)
  }, 120_000)

  test.concurrent('completes a turn through an openai provider on the mock upstream', async () => {
    bed.mock.reset() // the mock is this test's alone
    // The mock calls two of the offered tools, then answers once their results come back.
    const run = await turn('cc-openai', 'hello', 'mock/gpt-4o-mini')
    expect(run.stdout).toContain('Hello from the mock')
    expect(bed.mock.stats.requests).toBe(2)
    const last = (bed.mock.stats.lastBody as { messages: Array<{ role: string }> }).messages.at(-1)
    expect(last?.role).toBe('tool')
    expect(await usageCount(run.key)).toBe(2)
  }, 120_000)
})
