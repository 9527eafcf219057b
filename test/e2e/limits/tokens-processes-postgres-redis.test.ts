/**
 * Tokens across processes (issue 21's acceptance) on PostgreSQL + Redis (three replicas): the tests are
 * test/support/tokens-processes.ts's, one file per backend so that `--parallel` runs the three
 * side by side (each spends its wall time on gateways starting and reservation TTLs, not CPU).
 */
import { tokensProcessesSuite } from '../../support/tokens-processes.ts'

tokensProcessesSuite('postgres+redis', 'tokens-processes-postgres-redis.test.ts')
