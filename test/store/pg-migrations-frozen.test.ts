/**
 * A landed PostgreSQL migration is frozen (STYLE.md): its text is built from shared parts
 * (admit-sql.ts splices into v1, v2, v5, v12 and v14), so a change to a part must not change
 * what a landed version runs. SHA-256 of each version's text, first 16 hex digits; a new
 * version adds its line once it lands.
 */
import { expect, test } from 'bun:test'
import { MIGRATIONS } from '../../src/store/postgres/migrations.ts'

const LANDED: Record<number, string> = {
  1: '0c6ad6a39ff9b85d',
  2: '5c5379a43ea09350',
  3: '59e9c7f89b3866f0',
  4: '4919b1a5c230aaeb',
  5: 'fc32cfe7a1f54e01',
  6: '83c1983afb3f37ef',
  7: 'ce7684416fa70c18',
  8: '8cb2f3b315e53d3f',
  9: '64b08ff4979c76ac',
  10: '6ca28a00791eca47',
  11: 'a04e5c662e012c3e',
  12: 'a0a6cb481ac3f3da',
  13: '9fc39503dac18941',
  14: 'a71e1b912c817c94',
  15: '26cccd5e6789eb64',
  16: '0f1baba4cbd9cc2c',
  17: 'a614a9c1b310778b',
  18: 'aef271794bfc2206',
  19: '56c2898a0063610c',
  20: 'd5d5de41351325a3',
  21: '0a2990883c4b5039',
}

test('every landed PostgreSQL migration runs the text it landed with', () => {
  const now: Record<number, string> = {}
  for (const m of MIGRATIONS) {
    if (LANDED[m.version] === undefined) continue
    now[m.version] = new Bun.CryptoHasher('sha256').update(m.sql).digest('hex').slice(0, 16)
  }
  expect(now).toEqual(LANDED)
})
