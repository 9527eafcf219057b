/**
 * @module
 * PostgreSQL schema v21: a reservation's growth past a budget period's edge is checked against the
 * period it is charged to, its admission's (DESIGN §11: never over-admitted). v17's
 * `switchyard_extend` read each money row's spend in the period holding the growth's time but
 * charged the growth to the admission's: two streams admitted at 23:59 of a $1 day grew on the
 * next day's empty budget and charged $1.49 to the old one. Replaced, edited from v17's text;
 * nothing stored changes. A money row's reset in the states it returns is that period's end.
 */

import { edit } from './migration-edit.ts'
import { EXTEND_V17 } from './migrations-v17.ts'

export const EXTEND_V21 = [
  ['CREATE FUNCTION switchyard_extend(', 'CREATE OR REPLACE FUNCTION switchyard_extend('],
  ['switchyard_period(r.period, v_now)', 'switchyard_period(r.period, q.created_at)'],
].reduce((text, [from, to]) => edit(text, from!, to!), EXTEND_V17)
