/**
 * @module
 * PostgreSQL schema v14: a refusal with several request windows full gives the latest retry time
 * (DESIGN §5: `retry-after` until a request would be admitted). v12 took the first full one's, so
 * a day filled within the last minute told its client to come back in 60 s, to be refused again
 * then. Two functions are replaced, nothing stored changes:
 * - `switchyard_admit_charged` with `ADMIT_DECIDE_V14` (admit-sql.ts): the account's RPM and RPD;
 * - `switchyard_charge`, edited from v12's text: a key's own request rows (requests come first in
 *   the rows, limits/rows.ts), the one that admits last refuses;
 * - `switchyard_sweep`: a reservation nobody settled (its replica was killed) is settled to itself,
 *   the most it could have cost, not to nothing: the upstream may have answered it in full, and
 *   one killed between answering and its usage flush certainly did (DESIGN §11: nothing
 *   over-admitted). Settled, it leaves its windows as they slide, like any charge.
 */
import { ADMIT_DECIDE_V14 } from './admit-sql.ts'
import { edit } from './migration-edit.ts'
import { admitCharged, CHARGE_V12 } from './migrations-v12.ts'

const REFUSED = `      RETURN jsonb_build_object('ok', FALSE, 'i', r.i - 1, 'used', v_used, 'remaining', v_left, 'reset', v_reset,
        'needs', v_needs, 'retry', v_retry);
    END IF;`

const CHARGE_V14 = [
  ['CREATE FUNCTION switchyard_charge(', 'CREATE OR REPLACE FUNCTION switchyard_charge('],
  ['  v_retry BIGINT;\n', '  v_retry BIGINT;\n  v_refusal JSONB;\n'],
  // Past the request rows with one refusing: it is the answer.
  [
    `      AS x(resource, "window", period, scope, capacity, i) LOOP
    v_scope := CASE WHEN r.scope = 'account' THEN 'a:' || p_account ELSE 'k:' || p_key END;
    v_first := NULL;`,
    `      AS x(resource, "window", period, scope, capacity, i) LOOP
    IF v_refusal IS NOT NULL AND r.resource <> 'requests' THEN RETURN v_refusal; END IF;
    v_scope := CASE WHEN r.scope = 'account' THEN 'a:' || p_account ELSE 'k:' || p_key END;
    v_first := NULL;`,
  ],
  // A request row that refuses is kept if it admits later than the one kept so far.
  [
    REFUSED,
    `      IF r.resource = 'requests' THEN
        IF v_refusal IS NULL OR v_retry > (v_refusal->>'retry')::BIGINT THEN
          v_refusal := jsonb_build_object('ok', FALSE, 'i', r.i - 1, 'used', v_used, 'remaining', v_left,
            'reset', v_reset, 'needs', v_needs, 'retry', v_retry);
        END IF;
        CONTINUE;
      END IF;
${REFUSED}`,
  ],
  [
    `  END LOOP;
  v_tokens := v_in + v_out;`,
    `  END LOOP;
  IF v_refusal IS NOT NULL THEN RETURN v_refusal; END IF;
  v_tokens := v_in + v_out;`,
  ],
].reduce((text, [from, to]) => edit(text, from!, to!), CHARGE_V12)

const SWEEP_V14 = `CREATE OR REPLACE FUNCTION switchyard_sweep(p_before BIGINT, p_limit INTEGER) RETURNS INTEGER
LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN switchyard_settle((
    SELECT COALESCE(jsonb_agg(jsonb_build_object('id', q.gateway_id, 'tokens', q.tokens, 'micros', q.charge_micros)),
      '[]'::JSONB)
    FROM (SELECT gateway_id, tokens, charge_micros FROM requests WHERE NOT settled AND created_at < p_before
          ORDER BY created_at LIMIT p_limit) q));
END
$fn$;`

export const RETRY_LATER_V14 = `${admitCharged('CREATE OR REPLACE', ADMIT_DECIDE_V14)}
${CHARGE_V14}
${SWEEP_V14}`
