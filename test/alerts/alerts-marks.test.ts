/**
 * A once-only alert (its mark) is queued once by a process, not once per usage flush: a threshold
 * stays crossed for the rest of its period, and each flush that charges the account finds it again.
 * Before, every such flush cost the store a write transaction that only refused the repeat.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { Alerts } from '../../src/alerts/index.ts'
import type { RawConfig } from '../../src/config/schema.ts'
import { resolveAlerts } from '../../src/config/signals.ts'
import { openSqliteStore } from '../../src/store/sqlite/index.ts'
import { ManualClock } from '../../src/util/clock.ts'
import { createLogger } from '../../src/util/log.ts'
import { tempDir } from '../support/config-doc.ts'

test('a mark already queued by this process is not written to the store again', async () => {
  const T0 = Date.UTC(2026, 10, 29, 12)
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: T0 })
  try {
    let writes = 0
    const enqueue = store.enqueueAlert.bind(store)
    store.enqueueAlert = (a) => {
      writes++
      return enqueue(a)
    }
    const config = resolveAlerts({
      alerts: {
        webhooks: [
          { url: 'http://127.0.0.1:1/hook', secret: 'whsec-0123456789abcdef', events: ['budget.threshold'] },
        ],
      },
    } as unknown as RawConfig)
    const alerts = new Alerts(
      config,
      store,
      new ManualClock(T0),
      createLogger('error', () => {}),
    )
    // Ten flushes find 50 and 80 % crossed: each mark reaches the store once.
    for (let flush = 0; flush < 10; flush++) {
      for (const t of [50, 80])
        alerts.emit(
          'budget.threshold',
          { threshold_percent: t },
          `budget.threshold:account:1:month:${T0}:${t}`,
        )
      await alerts.flush()
    }
    expect(writes).toBe(2)
    const queued = await store.listDeliveries({ beforeId: null, limit: 50 })
    expect(queued).toHaveLength(2)
    // An alert without a mark is queued each time it is emitted.
    alerts.emit('budget.threshold', { threshold_percent: 100 })
    alerts.emit('budget.threshold', { threshold_percent: 100 })
    await alerts.flush()
    expect(writes).toBe(4)
  } finally {
    store.close()
  }
})
