/**
 * The Gemini pass-through's cut gate counts every part billed as output — code execution's code
 * and its output as well as text and function calls — so a code-executing answer ends at the
 * allowance like a text one (DESIGN §11: nothing an upstream sends spends past the limit).
 */
import { expect, test } from 'bun:test'
import { OutputAllowance } from '../../../src/pipeline/output-allowance.ts'
import { GeminiCutGate } from '../../../src/surfaces/gemini/pass-through.ts'

const enc = new TextEncoder()
const event = (parts: unknown[]) =>
  enc.encode(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0 }] })}\n\n`)

test('code execution parts count toward the allowance: the gate cuts at it', async () => {
  const code = 'print(1)\n'.repeat(40)
  for (const part of [
    { executableCode: { language: 'PYTHON', code } },
    { codeExecutionResult: { outcome: 'OUTCOME_OK', output: code } },
  ]) {
    const gate = new GeminiCutGate(new OutputAllowance(20, 'gemini'), 0)
    expect(await gate.admit(event([{ text: 'ok' }]))).toBe(true)
    const before = gate.counted
    // The event that would pass the allowance is refused, and not counted: it never went out.
    expect(await gate.admit(event([part]))).toBe(false)
    expect(gate.cut).toBe(true)
    expect(gate.counted).toBe(before)
    expect(await gate.admit(event([{ text: 'more' }]))).toBe(false)
  }
})
