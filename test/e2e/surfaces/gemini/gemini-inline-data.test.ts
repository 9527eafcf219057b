/**
 * An `inlineData.data` that is not base64 (a URL, text) is refused as Gemini refuses it: 400
 * INVALID_ARGUMENT naming the field in Google's error shape, by `:countTokens`, `:generateContent`
 * and `:streamGenerateContent` alike, before admission. `:countTokens` used to count its text as
 * input, and generation to send it on as an image. Base64 in either alphabet, padded or not, passes.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { isBase64 } from '../../../../src/surfaces/gemini/inline-data.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  const seeing = { ...DEMO_PROVIDER.models[0]!, name: 'eyes', features: ['streaming', 'vision'] }
  gw = await startGateway({
    doc: testConfigDoc({ providers: [{ ...DEMO_PROVIDER, models: [...DEMO_PROVIDER.models, seeing] }] }),
  })
})
afterAll(() => gw.stop())

const call = (key: string, method: string, body: unknown) =>
  fetch(
    `${gw.url}/v1beta/models/demo/eyes:${method}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`,
    {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
  )

const withImage = (data: string) => ({
  contents: [
    { role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data } }] },
  ],
})

test('undecodable inlineData → 400 INVALID_ARGUMENT naming the field, on every method, not admitted', async () => {
  const { key } = await gw.key('inline-bad', 'free') // rpm 5
  const url = 'https://example.com/cat.png'
  const cases: Array<[string, unknown, string]> = [
    ['countTokens', withImage(url), 'contents[0].parts[1].inlineData.data'],
    [
      'countTokens',
      { generateContentRequest: { model: 'models/eyes', ...withImage('a') } },
      'generateContentRequest.contents[0].parts[1].inlineData.data',
    ],
    ['generateContent', withImage(url), 'contents[0].parts[1].inlineData.data'],
    ['streamGenerateContent', withImage('aGVsbG8=x'), 'contents[0].parts[1].inlineData.data'],
    [
      'generateContent',
      {
        ...withImage('aGk='),
        systemInstruction: { parts: [{ inlineData: { mimeType: 'image/png', data: 'not base64' } }] },
      },
      'systemInstruction.parts[0].inlineData.data',
    ],
  ]
  for (const [method, body, field] of cases) {
    const res = await call(key, method, body)
    expect(res.status, `${method} ${field}`).toBe(400)
    expect(res.headers.get('x-request-id')).toBeTruthy()
    const error = ((await res.json()) as any).error
    expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
    expect(error.message).toContain(`Invalid value at '${field}' (TYPE_BYTES), Base64 decoding failed`)
    const violation = error.details.find((d: any) => d['@type'].endsWith('BadRequest'))
    expect(violation.fieldViolations[0].field).toBe(field)
  }
  // Refused before admission: the minute's five requests are all left.
  const ok = await call(key, 'generateContent', withImage('aGVsbG8'))
  expect(ok.status).toBe(200)
  expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe('4')
})

test('base64 in either alphabet, padded or not, is counted and answered', async () => {
  const { key } = await gw.key('inline-good', 'unlimited')
  for (const data of ['aGVsbG8gd29ybGQ=', 'aGVsbG8gd29ybGQ', '-_-_', '+/+/', '']) {
    const count = await call(key, 'countTokens', withImage(data))
    expect(count.status, data).toBe(200)
    expect(((await count.json()) as any).totalTokens).toBeGreaterThan(0)
    expect((await call(key, 'generateContent', withImage(data))).status, data).toBe(200)
  }
})

test('isBase64: the alphabet, padding only at the end, no group of one character', () => {
  for (const ok of ['', 'QQ', 'QQ==', 'QUI', 'QUI=', 'QUJD', 'a-_b', 'ab+/'])
    expect(isBase64(ok), ok).toBe(true)
  for (const bad of ['Q', 'QUJDR', 'QQ=', 'Q===', 'QQ==QQ==', 'QU JD', 'QUJD\n', 'http://x', 'é']) {
    expect(isBase64(bad), bad).toBe(false)
  }
})
