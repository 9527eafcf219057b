/** Each surface names a feature's use and what to do without it in its own words (featureUse). */
import { expect, test } from 'bun:test'
import { featureUse } from '../../src/catalogue/features.ts'
import { detectGeminiFeatures } from '../../src/surfaces/gemini/features.ts'
import { detectMessagesFeatures } from '../../src/surfaces/messages/features.ts'

test('featureUse gives a use the wording of the table it was made with', () => {
  const use = featureUse({ streaming: 'send "stream": false', n: 'send one' })
  expect(use('n', 'n')).toEqual({ feature: 'n', param: 'n', doWithout: 'send one' })
})

test("Gemini's and Messages' uses say what to change in their own request's terms", () => {
  const gemini = detectGeminiFeatures(
    { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } as never,
    true,
  )
  expect(gemini).toContainEqual({
    feature: 'streaming',
    param: 'streamGenerateContent',
    doWithout: 'call :generateContent instead of :streamGenerateContent',
  })
  const messages = detectMessagesFeatures({
    model: 'm',
    max_tokens: 1,
    stream: true,
    system: 'be brief',
    messages: [{ role: 'user', content: 'hi' }],
  } as never)
  expect(messages.map((u) => [u.feature, u.doWithout])).toEqual([
    ['streaming', 'send "stream": false'],
    ['system_messages', 'move the system prompt into the first user message'],
  ])
})
