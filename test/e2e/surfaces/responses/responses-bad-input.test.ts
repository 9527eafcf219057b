/**
 * Bad input on `POST /v1/responses` over real HTTP: 1,000 seeded malformed bodies, sent to a
 * translated route (demo) and a pass-through route (a Responses upstream), each answered 4xx with
 * OpenAI's error body, or 200 where the mutation left a valid request — never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateMalformedResponses } from '../../../support/malformed-responses.ts'
import { type ResponsesBed, startResponsesBed } from '../../../support/responses-bed.ts'
import { validateErrorBody } from '../../../support/responses-schemas.ts'

const SEED = 20_261_123
const COUNT = 1_000

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed()
})
afterAll(() => bed.stop())

describe(`${COUNT} seeded malformed Responses bodies (seed ${SEED})`, () => {
  test('every one → 4xx with a schema-valid error naming what is wrong, or 200; never 5xx', async () => {
    const bodies = generateMalformedResponses(SEED, COUNT, 'demo/echo')
    const statuses = new Map<number, number>()
    const failures: string[] = []
    for (let i = 0; i < bodies.length; i += 25) {
      await Promise.all(
        bodies.slice(i, i + 25).map(async ({ body, mutation }, j) => {
          // Every other body goes to the pass-through route.
          const sent = (i + j) % 2 ? body.replace('"demo/echo"', '"oair/text"') : body
          const res = await bed.post(sent)
          const text = await res.text()
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
          if (res.status >= 500) failures.push(`${res.status} after "${mutation}": ${text.slice(0, 200)}`)
          else if (res.status >= 400) {
            const json = JSON.parse(text)
            if (validateErrorBody(json) !== null || !json.error.message)
              failures.push(`bad error body after "${mutation}"`)
          } else if (res.status !== 200) failures.push(`${res.status} after "${mutation}"`)
        }),
      )
    }
    expect(failures).toEqual([])
    const refused = [...statuses].filter(([s]) => s >= 400).reduce((n, [, c]) => n + c, 0)
    console.log(`responses fuzz: ${JSON.stringify(Object.fromEntries(statuses))}`)
    expect(refused).toBeGreaterThan(COUNT * 0.6)
  }, 120_000)

  test('is reproducible', () => {
    expect(generateMalformedResponses(SEED, 30, 'demo/echo')).toEqual(
      generateMalformedResponses(SEED, 30, 'demo/echo'),
    )
  })
})
