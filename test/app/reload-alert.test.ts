/**
 * The reload webhook's data (DESIGN §15): `others` only with `--workers N` — a single `serve`
 * process has no other workers, and its pool answers an empty list.
 */
import { expect, test } from 'bun:test'
import { reloadAlert } from '../../src/app/reload.ts'
import type { ReloadReport } from '../../src/server/deps.ts'

const report = (others: ReloadReport['others']): ReloadReport => ({
  outcome: 'applied',
  generation: 2,
  changed: { sections: ['server'], entries: {} },
  problems: [],
  restart: false,
  source: '/etc/switchyard/config.yaml',
  others,
})

test('one process (no other workers, an empty list): no `others` in the webhook', () => {
  expect(reloadAlert(report([]))!.data).not.toHaveProperty('others')
  expect(reloadAlert(report(undefined))!.data).not.toHaveProperty('others')
})

test('with other workers: their outcomes in `others`', () => {
  const others = [{ pid: 42, outcome: 'applied' }]
  expect(reloadAlert(report(others))!.data.others).toEqual(others)
})
