/**
 * @module
 * PostgreSQL schema v14: a refusal with both request windows full gives the later retry time
 * (DESIGN §5: `retry-after` until a request would be admitted). v12's `switchyard_admit_charged`
 * took the minute's, so a day filled within the last minute told its client to come back in
 * 60 s, to be refused again then. The function is replaced with `ADMIT_DECIDE_V14`
 * (admit-sql.ts); nothing stored changes.
 */
import { ADMIT_DECIDE_V14 } from './admit-sql.ts'
import { admitCharged } from './migrations-v12.ts'

export const RETRY_LATER_V14 = admitCharged('CREATE OR REPLACE', ADMIT_DECIDE_V14)
