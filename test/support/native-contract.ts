/**
 * @module
 * The end-to-end contract every native-protocol provider (Anthropic, Gemini) must keep through the
 * real gateway and the official `openai` client, as one parameterised suite. Each provider's test
 * file supplies what its recordings say (`expected`), its error table and the requests its models
 * must refuse, and adds the tests only it needs.
 *
 * Every bed serves fixtures `text`, `tool`, `two-tools`, `stream-error` (text "Once upon", then an
 * overloaded error) and `truncated` (the stream stops before its end).
 *
 * @example
 * describeNativeContract({ prefix: 'anthropic', apiKey, bed: () => bed, expected, callsOf, httpErrors, refused })
 */
import { describe, expect, test } from 'bun:test'
import type { APIError } from 'openai'
import { BadRequestError } from 'openai'
import {
  eventually,
  expectOpenAIStreamShape,
  type NativeBed,
  readRawStream,
  rejection,
  userMessage,
  WEATHER_TOOLS,
} from './native-bed.ts'
import { validateError, validateResponse } from './openai-schemas.ts'

/** One recorded answer in OpenAI terms. `calls` are in whatever form the spec's `callsOf` returns. */
export interface RecordedAnswer {
  content: string | null
  calls: readonly unknown[]
  finish: string
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; [k: string]: unknown }
}

export type AnswerFixture = 'text' | 'tool' | 'two-tools'

type ToolCalls = Array<{ id: string; function: { name: string; arguments: string } }> | undefined

export interface NativeContract {
  prefix: string
  /** The provider key; no client-visible error may contain it. */
  apiKey: string
  bed: () => NativeBed<string>
  expected: Record<AnswerFixture, { stream: RecordedAnswer; json: RecordedAnswer }>
  /** A message's tool calls as `expected` lists them. */
  callsOf: (toolCalls: ToolCalls) => unknown[]
  /** Fixture, gateway status, gateway code, the client's error class. */
  httpErrors: Array<[string, number, string, new (...args: any[]) => APIError]>
  /** What the request adds, and the `param` the 400 names. */
  refused: Array<[string, Record<string, unknown>, string]>
}

export function describeNativeContract(spec: NativeContract): void {
  const { prefix, apiKey, expected, callsOf } = spec
  const body = (fixture: string, extra: Record<string, unknown> = {}) => ({
    model: `${prefix}/${fixture}`,
    messages: userMessage(),
    ...extra,
  })
  const ANSWERS: AnswerFixture[] = ['text', 'tool', 'two-tools']

  describe(`${prefix} through the gateway: answers`, () => {
    for (const fixture of ANSWERS) {
      test(`${fixture}: non-stream content, tool calls, finish reason and usage are the provider's`, async () => {
        const want = expected[fixture].json
        const res = await spec
          .bed()
          .client()
          .chat.completions.create(body(fixture, { tools: WEATHER_TOOLS }))
        expect(validateResponse(res)).toBeNull()
        expect(res.model).toBe(`${prefix}/${fixture}`)
        const choice = res.choices[0]!
        expect(choice.message.content).toBe(want.content)
        expect(callsOf(choice.message.tool_calls as ToolCalls)).toEqual([...want.calls])
        expect(choice.finish_reason).toBe(want.finish as any)
        expect(res.usage).toMatchObject(want.usage)
      })

      test(`${fixture}: streamed deltas and the client's stream helper rebuild the provider's answer`, async () => {
        const want = expected[fixture].stream
        const client = spec.bed().client()
        const stream = await client.chat.completions.create({
          ...body(fixture, { tools: WEATHER_TOOLS, stream_options: { include_usage: true } }),
          stream: true,
        })
        let content = ''
        let finish: string | null = null
        let streamUsage: unknown = null
        for await (const chunk of stream) {
          expect(chunk.model).toBe(`${prefix}/${fixture}`)
          for (const c of chunk.choices) {
            content += c.delta.content ?? ''
            finish = c.finish_reason ?? finish
          }
          if (chunk.usage) streamUsage = chunk.usage
        }
        expect(content).toBe(want.content ?? '')
        expect(finish).toBe(want.finish)
        expect(streamUsage).toMatchObject(want.usage)

        const final = await client.chat.completions
          .stream(body(fixture, { tools: WEATHER_TOOLS }))
          .finalChatCompletion()
        expect(final.model).toBe(`${prefix}/${fixture}`)
        expect(final.choices[0]!.message.content ?? '').toBe(want.content ?? '')
        expect(callsOf(final.choices[0]!.message.tool_calls as ToolCalls)).toEqual([...want.calls])
        expect(final.choices[0]!.finish_reason).toBe(want.finish as any)
      })
    }

    test('stream and non-stream of the same answer agree', async () => {
      const client = spec.bed().client()
      const plain = await client.chat.completions.create(body('two-tools', { tools: WEATHER_TOOLS }))
      const streamed = await client.chat.completions
        .stream(body('two-tools', { tools: WEATHER_TOOLS }))
        .finalChatCompletion()
      expect(streamed.choices[0]!.message.content).toBe(plain.choices[0]!.message.content)
      expect(callsOf(streamed.choices[0]!.message.tool_calls as ToolCalls)).toEqual(
        callsOf(plain.choices[0]!.message.tool_calls as ToolCalls),
      )
    })

    test('every raw chunk validates and follows the OpenAI stream shape, ending in the usage chunk', async () => {
      for (const fixture of ANSWERS) {
        const raw = await readRawStream(
          await spec.bed().post(body(fixture, { stream: true, stream_options: { include_usage: true } })),
        )
        const usageChunk = expectOpenAIStreamShape(raw, `${prefix}/${fixture}`)
        expect(usageChunk.usage).toMatchObject(expected[fixture].stream.usage)
        expect(raw.events.at(-2).choices[0].finish_reason).toBe(expected[fixture].stream.finish)
      }
    })

    test('without include_usage there is no usage chunk and no usage key', async () => {
      const raw = await readRawStream(await spec.bed().post(body('text', { stream: true })))
      expect(raw.done).toBe(true)
      for (const chunk of raw.events) {
        expect(chunk.choices).toHaveLength(1)
        expect('usage' in chunk).toBe(false)
      }
    })
  })

  describe(`${prefix} through the gateway: usage records`, () => {
    const tokens = ({ prompt_tokens, completion_tokens, total_tokens }: RecordedAnswer['usage'], n = 1) => ({
      prompt_tokens: n * prompt_tokens,
      completion_tokens: n * completion_tokens,
      total_tokens: n * total_tokens,
    })

    test('/v1/usage records the non-stream tokens', async () => {
      const bed = spec.bed()
      const key = await bed.freshKey()
      await bed.client(key).chat.completions.create(body('two-tools'))
      expect(await bed.usageOf(key, `${prefix}/two-tools`)).toMatchObject({
        requests: 1,
        errors: 0,
        ...tokens(expected['two-tools'].json.usage),
      })
    })

    test('/v1/usage records the stream tokens, whether or not the client asked to see them', async () => {
      const bed = spec.bed()
      const key = await bed.freshKey()
      for (const include of [true, false]) {
        const stream = await bed.client(key).chat.completions.create({
          ...body('text'),
          stream: true,
          ...(include ? { stream_options: { include_usage: true } } : {}),
        })
        for await (const _ of stream) {
          // drain
        }
      }
      expect(await bed.usageOf(key, `${prefix}/text`)).toMatchObject({
        requests: 2,
        errors: 0,
        ...tokens(expected.text.stream.usage, 2),
      })
    })
  })

  describe(`${prefix} through the gateway: failures`, () => {
    test('an error mid-stream ends the stream with an error event; the client throws', async () => {
      const bed = spec.bed()
      const key = await bed.freshKey()
      const stream = await bed.client(key).chat.completions.create({ ...body('stream-error'), stream: true })
      let content = ''
      const err = await rejection(
        (async () => {
          for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? ''
        })(),
        apiKey,
      )
      expect(content).toBe('Once upon')
      expect(err.code).toBe('upstream_overloaded')
      expect(err.message).toContain('overloaded')

      const raw = await readRawStream(await bed.post({ ...body('stream-error'), stream: true }))
      expect(raw.done).toBe(false)
      expect(raw.events.at(-1)).toMatchObject({ error: { code: 'upstream_overloaded' } })
      expect(await bed.usageOf(key, `${prefix}/stream-error`)).toMatchObject({ requests: 1, errors: 1 })
    })

    test('a stream cut before its end ends with an upstream_stream_interrupted event', async () => {
      const raw = await readRawStream(await spec.bed().post({ ...body('truncated'), stream: true }))
      expect(raw.done).toBe(false)
      expect(raw.events.at(-1)).toMatchObject({ error: { code: 'upstream_stream_interrupted' } })
    })

    test('the gateway stays healthy after upstream failures', async () => {
      const bed = spec.bed()
      for (const fixture of ['stream-error', 'truncated', spec.httpErrors[0]![0]]) {
        await bed.post({ ...body(fixture), stream: true }).then((r) => r.text())
      }
      expect((await fetch(`${bed.gw.url}/healthz`)).status).toBe(200)
      const res = await bed.client().chat.completions.create(body('text'))
      expect(res.choices[0]!.message.content).toBe(expected.text.json.content)
    })

    for (const [fixture, status, code, ErrorClass] of spec.httpErrors) {
      test(`HTTP error ${fixture} → ${status} ${code} as ${ErrorClass.name}, streamed or not`, async () => {
        for (const stream of [false, true]) {
          const err = await rejection(
            spec
              .bed()
              .client()
              .chat.completions.create({ ...body(fixture), stream } as any),
            apiKey,
          )
          expect(err).toBeInstanceOf(ErrorClass)
          expect(err.status).toBe(status)
          expect(err.code).toBe(code)
          expect(validateError({ error: err.error })).toBeNull()
        }
      })
    }
  })

  describe(`${prefix} through the gateway: refused before any upstream call`, () => {
    for (const [what, extra, param] of spec.refused) {
      test(`${what} → 400 unsupported_feature naming ${param}, and the provider hears nothing`, async () => {
        const bed = spec.bed()
        for (const stream of [false, true]) {
          const request = { model: `${prefix}-cold/text`, messages: userMessage(), stream, ...extra }
          const err = await rejection(bed.client().chat.completions.create(request as any), apiKey)
          expect(err).toBeInstanceOf(BadRequestError)
          expect(err.code).toBe('unsupported_feature')
          expect(err.param).toBe(param)
          expect(validateError({ error: err.error })).toBeNull()
        }
        expect(bed.cold.requests()).toEqual([])
      })
    }
  })

  describe(`${prefix} through the gateway: client abort`, () => {
    test('a client that leaves mid-stream cancels the upstream stream within a second', async () => {
      const bed = spec.bed()
      const key = await bed.freshKey()
      const before = bed.slow.cancelledStreams()
      const stream = await bed
        .client(key)
        .chat.completions.create({ model: `${prefix}-slow/text`, messages: userMessage(), stream: true })
      let chunks = 0
      for await (const _ of stream) {
        if (++chunks === 2) break // leaving the loop aborts the request
      }
      expect(await eventually(() => bed.slow.cancelledStreams() > before, 1_000)).toBe(true)
      expect(await bed.usageOf(key, `${prefix}-slow/text`)).toMatchObject({ requests: 1, errors: 1 })
      expect((await fetch(`${bed.gw.url}/healthz`)).status).toBe(200)
    })
  })
}
