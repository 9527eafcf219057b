/**
 * @module
 * The corpus the input-token estimator is chosen and pinned on (issue 21). Two halves:
 *
 * - **Reported**: request bodies whose input-token count a provider itself reported. OpenAI chat:
 *   `test/fixtures/openai-chat-token-counts.json`, the 32 cases gpt-tokenizer 3.4.0 (MIT) ships as
 *   `esm/fixtures/functionCallingTestCases.js`, copied unchanged: prompt tokens the OpenAI API
 *   returned for them (cl100k models, with legacy `functions`). OpenAI Responses: the first step of the recorded calculator loop
 *   (`test/fixtures/reference/recorded/openai-responses-reasoning.chunks.txt`, 134 input tokens;
 *   its prompt and tool are those of the vercel/ai example that recorded it, the tool as the
 *   recording's `response.created` echoes it). Anthropic: the two requests of Claude's
 *   token-counting guide with the counts it shows (14 and 403; the 403 includes the hidden
 *   tool-use system prompt).
 * - **Synthetic**: text of several kinds (English prose and code taken from this repository,
 *   JSON, snapshotted in `test/fixtures/token-corpus-texts.json`; Chinese, Japanese, Korean, Cyrillic, Devanagari, emoji, digits, long repeated tokens,
 *   base64, random printable bytes), each wrapped in a one-message chat body. Generated from a
 *   fixed seed, so each sample is the same text on every run; the counts of tokenizers that are not
 *   dependencies (Claude's, Gemini's, Llama's) are pinned in `token-corpus-counts.json`, written
 *   by `bun scripts/bench/estimate-tokens.ts --write-counts` with them installed.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import openaiChatCounts from '../fixtures/openai-chat-token-counts.json'
// Prose, code and JSON of this repository as they were when the counts were pinned (README.md,
// docs/providers.md, src/config/load.ts, package.json, 4,096 characters each): the live files
// change, the pinned counts of tokenizers that are not dependencies cannot follow them.
import repoTexts from '../fixtures/token-corpus-texts.json'

export type Surface = 'chat' | 'messages' | 'responses'

export interface ReportedSample {
  name: string
  surface: Surface
  /** Who counted: the provider whose API reported `tokens`. */
  provider: 'openai' | 'anthropic'
  body: string
  /** Input tokens the provider reported for this body. */
  tokens: number
}

export interface SyntheticSample {
  name: string
  kind: string
  /** The text, as the message's content. */
  text: string
  /** A chat body carrying `text` as one user message. */
  body: string
}

const ROOT = join(import.meta.dir, '..', '..')

export function reportedSamples(): ReportedSample[] {
  const out: ReportedSample[] = []
  const openaiChat = openaiChatCounts as Array<Record<string, unknown> & { tokens: number }>
  openaiChat.forEach((c, i) => {
    const { tokens, ...request } = c
    out.push({
      name: `openai-chat-fixture-${i + 1}`,
      surface: 'chat',
      provider: 'openai',
      body: JSON.stringify({ model: 'openai/gpt-4', ...request }),
      tokens,
    })
  })
  out.push({
    name: 'openai-responses-calculator-step-1',
    surface: 'responses',
    provider: 'openai',
    body: JSON.stringify({
      model: 'openai/gpt-5.1-codex-max',
      input: [
        {
          role: 'user',
          content: [
            {
              type: 'input_text',
              text: 'Use the calculator tool to add 12 and 7, then multiply that sum by 3 then multiply by 10. Call the tool separately for each arithmetic step and only 1 tool call per step and report the final result.',
            },
          ],
        },
      ],
      tools: recordedCalculatorTools(),
      reasoning: { effort: 'high', summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      max_output_tokens: 32000,
    }),
    tokens: 134,
  })
  out.push({
    name: 'anthropic-guide-system-and-hello',
    surface: 'messages',
    provider: 'anthropic',
    body: JSON.stringify({
      model: 'anthropic/claude-sonnet-4-5',
      system: 'You are a scientist',
      messages: [{ role: 'user', content: 'Hello, Claude' }],
    }),
    tokens: 14,
  })
  out.push({
    name: 'anthropic-guide-weather-tool',
    surface: 'messages',
    provider: 'anthropic',
    body: JSON.stringify({
      model: 'anthropic/claude-sonnet-4-5',
      tools: [
        {
          name: 'get_weather',
          description: 'Get the current weather in a given location',
          input_schema: {
            type: 'object',
            properties: {
              location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
            },
            required: ['location'],
          },
        },
      ],
      messages: [{ role: 'user', content: "What's the weather like in San Francisco?" }],
    }),
    tokens: 403,
  })
  return out
}

/** The calculator tool exactly as the recording's `response.created` echoes it. */
function recordedCalculatorTools(): unknown[] {
  const path = join(ROOT, 'test/fixtures/reference/recorded/openai-responses-reasoning.chunks.txt')
  const first = readFileSync(path, 'utf8').split('\n')[0] ?? ''
  const { tools } = JSON.parse(first).response as { tools: Record<string, unknown>[] }
  return tools.map(({ type, name, description, parameters, strict }) => ({
    type,
    name,
    description,
    parameters,
    strict,
  }))
}

/** A small deterministic generator (mulberry32), so the synthetic corpus is the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function fromRange(next: () => number, ranges: [number, number][], n: number): string {
  let s = ''
  for (let i = 0; i < n; i++) {
    const [lo, hi] = ranges[Math.floor(next() * ranges.length)]!
    s += String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)))
  }
  return s
}

const CHINESE =
  '网关在接受请求之前先预留令牌，请求结束后再按上游报告的用量结算。每个账户的限额在所有密钥之间共享，' +
  '超出限额的请求会收到明确的错误信息，说明何时可以重试。价格以每百万令牌的美元计算，按整数微美元保存，避免浮点误差。'
const JAPANESE =
  'ゲートウェイはリクエストを受け付ける前にトークンを予約し、終了後に上流が報告した使用量で精算します。' +
  '東京の天気は晴れ、気温は二十三度です。カタカナとひらがなと漢字が混ざった文章です。'
const KOREAN =
  '게이트웨이는 요청을 받기 전에 토큰을 예약하고, 요청이 끝나면 업스트림이 보고한 사용량으로 정산합니다. '
const RUSSIAN =
  'Шлюз резервирует токены до приёма запроса и рассчитывается по фактическому расходу после него. '
const HINDI = 'गेटवे अनुरोध स्वीकार करने से पहले टोकन आरक्षित करता है और बाद में वास्तविक उपयोग के अनुसार निपटान करता है। '

function repeatTo(s: string, chars: number): string {
  return s.repeat(Math.ceil(chars / s.length)).slice(0, chars)
}

/** Text kinds, each about `chars` UTF-16 units long. */
export function syntheticSamples(chars = 4096): SyntheticSample[] {
  const next = rng(21)
  const bytes = new Uint8Array(Math.ceil((chars * 3) / 4))
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(next() * 256)
  const kinds: [string, string][] = [
    ['english-prose', repoTexts['english-prose'].slice(0, chars)],
    ['english-prose-2', repoTexts['english-prose-2'].slice(0, chars)],
    ['typescript-code', repoTexts['typescript-code'].slice(0, chars)],
    ['json', repoTexts.json.slice(0, chars)],
    ['english-prose-3', repoTexts['english-prose-3'].slice(0, chars)],
    ['english-prose-4', repoTexts['english-prose-4'].slice(0, chars)],
    ['typescript-code-2', repoTexts['typescript-code-2'].slice(0, chars)],
    ['typescript-code-3', repoTexts['typescript-code-3'].slice(0, chars)],
    ['tool-schemas', repoTexts['tool-schemas'].slice(0, chars)],
    ['tool-schemas-2', repoTexts['tool-schemas-2'].slice(0, chars)],
    ['tool-schemas-3', repoTexts['tool-schemas-3'].slice(0, chars)],
    ['chinese', repeatTo(CHINESE, chars)],
    ['japanese', repeatTo(JAPANESE, chars)],
    ['korean', repeatTo(KOREAN, chars)],
    ['russian', repeatTo(RUSSIAN, chars)],
    ['hindi', repeatTo(HINDI, chars)],
    ['random-cjk', fromRange(next, [[0x4e00, 0x9fff]], chars)],
    ['random-cjk-ext-b', fromRange(next, [[0x20000, 0x2a6df]], chars / 2)],
    [
      'emoji',
      fromRange(
        next,
        [
          [0x1f300, 0x1f5ff],
          [0x1f600, 0x1f64f],
          [0x1f680, 0x1f6ff],
          [0x1f900, 0x1f9ff],
        ],
        chars / 2,
      ),
    ],
    ['emoji-zwj-families', repeatTo('👨‍👩‍👧‍👦👩🏽‍💻🏳️‍🌈', chars)],
    ['digits', fromRange(next, [[0x30, 0x39]], chars)],
    ['digits-spaced', Array.from({ length: chars / 2 }, () => String(Math.floor(next() * 10))).join(' ')],
    ['repeat-a', 'a'.repeat(chars)],
    ['repeat-space', ' '.repeat(chars)],
    ['repeat-newline', '\n'.repeat(chars)],
    ['repeat-word', 'token '.repeat(chars / 6)],
    ['repeat-ab', 'ab'.repeat(chars / 2)],
    ['base64', Buffer.from(bytes).toString('base64').slice(0, chars)],
    ['hex', Buffer.from(bytes).toString('hex').slice(0, chars)],
    ['random-ascii', fromRange(next, [[0x21, 0x7e]], chars)],
    ['random-letters', fromRange(next, [[0x61, 0x7a]], chars)],
    ['random-unicode-bmp', fromRange(next, [[0xa0, 0xd7ff]], chars)],
    [
      'punctuation',
      fromRange(
        next,
        [
          [0x21, 0x2f],
          [0x3a, 0x40],
          [0x5b, 0x60],
          [0x7b, 0x7e],
        ],
        chars,
      ),
    ],
  ]
  return kinds.map(([kind, text]) => ({
    name: `synthetic-${kind}`,
    kind,
    text,
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: text }] }),
  }))
}
