/**
 * @module
 * PostgreSQL schema v12: reserve and settle (DESIGN §11), the same rules as SQLite's
 * (sqlite/reserve.ts) in plpgsql, so N replicas reserve exactly what one process would.
 *
 * - `switchyard_charge`: under the account's lock (taken by the admission), each charge row's use
 *   — a sliding window's running sum in `limit_sums` moved to the window's edge (the charges that
 *   left subtracted; a sum not moved for a whole span summed afresh), a period's spend — the
 *   output allowance clamped to what every row leaves (refused below min(wanted, 256)), then the
 *   charge. Returns the decision as JSON.
 * - `switchyard_admit_charged` / `switchyard_admit_batch`: v5's admission and group commit with a
 *   charge: the request windows first (v5's rules, word for word), then the charge rows, then the
 *   admission row carrying what it charged (`tokens`, `charge_micros`, `budgets`, `settled`).
 * - `switchyard_settle`: settles reservations once (`NOT settled`), each under its account's lock
 *   taken in ascending order (as admission batches take them: no deadlock between the two),
 *   moving every window sum that still holds the charge and the period's spend.
 * - `switchyard_sweep`: settles the reservations older than a bound that nobody settled (a replica
 *   killed mid-request) — to nothing here, to themselves from v14 (migrations-v14.ts).
 */
import { ADMIT_DECIDE } from './admit-sql.ts'

/** v12's `switchyard_charge` (v14 replaces it with an edit of this text: migrations-v14.ts). */
export const CHARGE_V12 = `CREATE FUNCTION switchyard_charge(p_account BIGINT, p_key TEXT, p_now BIGINT, p_charge JSONB,
  p_minute_ms BIGINT, p_day_ms BIGINT)
RETURNS JSONB LANGUAGE plpgsql AS $fn$
DECLARE
  r RECORD;
  v_in BIGINT := (p_charge->>'inputTokens')::BIGINT;
  v_want BIGINT := (p_charge->>'wantOutput')::BIGINT;
  v_floor BIGINT;
  v_pin NUMERIC := COALESCE((p_charge->'price'->>'input')::NUMERIC, 0);
  v_pout NUMERIC := COALESCE((p_charge->'price'->>'output')::NUMERIC, 0);
  v_out BIGINT;
  v_clamp TEXT;
  v_scope TEXT;
  v_win TEXT;
  v_span BIGINT;
  v_edge BIGINT;
  v_start BIGINT;
  v_used BIGINT;
  v_found BOOLEAN;
  v_left BIGINT;
  v_fits NUMERIC;
  v_needs BIGINT;
  v_needs_out BIGINT;
  v_first BIGINT;
  v_reset BIGINT;
  v_free BIGINT;
  v_retry BIGINT;
  v_p RECORD;
  v_tokens BIGINT;
  v_micros BIGINT;
  v_amount BIGINT;
  v_budgets INTEGER := 0;
  v_states JSONB := '[]'::JSONB;
  c RECORD;
BEGIN
  v_floor := LEAST(v_want, 256);
  v_out := v_want;
  FOR r IN SELECT * FROM ROWS FROM (jsonb_to_recordset(p_charge->'rows')
      AS (resource TEXT, "window" TEXT, period TEXT, scope TEXT, capacity BIGINT)) WITH ORDINALITY
      AS x(resource, "window", period, scope, capacity, i) LOOP
    v_scope := CASE WHEN r.scope = 'account' THEN 'a:' || p_account ELSE 'k:' || p_key END;
    v_first := NULL;
    IF r."window" = 'period' THEN
      SELECT * INTO v_p FROM switchyard_period(r.period, p_now);
      SELECT s.micros INTO v_used FROM spend s WHERE s.scope = v_scope AND s.period = r.period AND s.start = v_p.o_start;
      v_used := COALESCE(v_used, 0);
      v_reset := v_p.o_end;
    ELSE
      v_span := CASE WHEN r."window" = 'minute' THEN p_minute_ms ELSE p_day_ms END;
      v_edge := p_now - v_span;
      v_win := r.resource || ':' || r."window";
      SELECT s.start, s.used INTO v_start, v_used FROM limit_sums s WHERE s.scope = v_scope AND s.win = v_win FOR UPDATE;
      v_found := FOUND;
      IF NOT v_found OR v_edge > v_start THEN
        IF v_found AND v_start + v_span > v_edge THEN
          SELECT v_used - COALESCE(SUM(CASE WHEN r.resource = 'requests' THEN 1 ELSE q.tokens END), 0) INTO v_used
            FROM requests q WHERE q.account_id = p_account AND q.created_at > v_start AND q.created_at <= v_edge
              AND (r.scope = 'account' OR q.key_id = p_key) AND (r.resource = 'requests' OR q.tokens > 0);
        ELSE
          SELECT COALESCE(SUM(CASE WHEN r.resource = 'requests' THEN 1 ELSE q.tokens END), 0) INTO v_used
            FROM requests q WHERE q.account_id = p_account AND q.created_at > v_edge
              AND (r.scope = 'account' OR q.key_id = p_key) AND (r.resource = 'requests' OR q.tokens > 0);
        END IF;
        INSERT INTO limit_sums AS s (scope, win, start, used) VALUES (v_scope, v_win, v_edge, v_used)
          ON CONFLICT (scope, win) DO UPDATE SET start = excluded.start, used = excluded.used;
      END IF;
      IF v_used > 0 THEN
        SELECT MIN(q.created_at) INTO v_first FROM requests q WHERE q.account_id = p_account AND q.created_at > v_edge
          AND (r.scope = 'account' OR q.key_id = p_key) AND (r.resource = 'requests' OR q.tokens > 0);
      END IF;
      v_reset := CASE WHEN v_first IS NULL THEN NULL ELSE v_first + v_span END;
    END IF;
    v_left := GREATEST(0, r.capacity - v_used);
    v_states := v_states || jsonb_build_object('used', v_used, 'remaining', v_left, 'reset', v_reset);
    IF r.resource = 'requests' THEN
      v_fits := CASE WHEN v_left >= 1 THEN v_want ELSE -1 END;
      v_needs := 1;
    ELSIF r.resource = 'tokens' THEN
      v_fits := v_left - v_in;
      v_needs := v_in + v_floor;
    ELSE
      v_fits := CASE WHEN v_pout = 0 THEN v_want ELSE floor((v_left * 1000000 - v_in * v_pin) / v_pout) END;
      IF v_left * 1000000 - v_in * v_pin < 0 THEN v_fits := -1; END IF;
      v_needs := ceil((v_in * v_pin + v_floor * v_pout) / 1000000);
    END IF;
    v_needs_out := CASE WHEN r.resource = 'requests' THEN 0 ELSE v_floor END;
    IF v_fits < v_needs_out THEN
      v_retry := NULL;
      IF r."window" = 'period' THEN
        v_retry := v_reset;
      ELSIF v_needs <= r.capacity THEN
        v_free := r.capacity - v_used;
        FOR c IN SELECT q.created_at, q.tokens FROM requests q WHERE q.account_id = p_account AND q.created_at > v_edge
            AND (r.scope = 'account' OR q.key_id = p_key) AND (r.resource = 'requests' OR q.tokens > 0)
            ORDER BY q.created_at, q.seq LOOP
          v_free := v_free + CASE WHEN r.resource = 'requests' THEN 1 ELSE c.tokens END;
          IF v_free >= v_needs THEN v_retry := c.created_at + v_span; EXIT; END IF;
        END LOOP;
        v_retry := COALESCE(v_retry, p_now + v_span);
      END IF;
      RETURN jsonb_build_object('ok', FALSE, 'i', r.i - 1, 'used', v_used, 'remaining', v_left, 'reset', v_reset,
        'needs', v_needs, 'retry', v_retry);
    END IF;
    IF r.resource <> 'requests' AND v_fits < v_out THEN
      v_out := v_fits;
      v_clamp := r.scope || ':' || r.resource || ':' || CASE WHEN r."window" = 'period' THEN r.period ELSE r."window" END;
    END IF;
  END LOOP;
  v_tokens := v_in + v_out;
  v_micros := ceil((v_in * v_pin + v_out * v_pout) / 1000000);
  FOR r IN SELECT * FROM ROWS FROM (jsonb_to_recordset(p_charge->'rows')
      AS (resource TEXT, "window" TEXT, period TEXT, scope TEXT, capacity BIGINT)) WITH ORDINALITY
      AS x(resource, "window", period, scope, capacity, i) LOOP
    v_scope := CASE WHEN r.scope = 'account' THEN 'a:' || p_account ELSE 'k:' || p_key END;
    v_amount := CASE r.resource WHEN 'requests' THEN 1 WHEN 'tokens' THEN v_tokens ELSE v_micros END;
    IF r."window" = 'period' THEN
      SELECT * INTO v_p FROM switchyard_period(r.period, p_now);
      INSERT INTO spend AS s (scope, period, start, micros) VALUES (v_scope, r.period, v_p.o_start, v_amount)
        ON CONFLICT (scope, period, start) DO UPDATE SET micros = s.micros + excluded.micros;
      v_budgets := v_budgets | ((CASE r.period WHEN 'day' THEN 1 WHEN 'week' THEN 2 ELSE 3 END)
        << (CASE WHEN r.scope = 'account' THEN 0 ELSE 2 END));
    ELSE
      UPDATE limit_sums s SET used = s.used + v_amount WHERE s.scope = v_scope AND s.win = r.resource || ':' || r."window";
    END IF;
  END LOOP;
  RETURN jsonb_build_object('ok', TRUE, 'tokens', v_tokens, 'micros', v_micros, 'out', v_out, 'clamp', v_clamp,
    'budgets', v_budgets, 'states', v_states,
    'settles', EXISTS (SELECT 1 FROM jsonb_array_elements(p_charge->'rows') e WHERE e->>'resource' <> 'requests'));
END
$fn$;
`

export const RESERVE_V12 = `
CREATE FUNCTION switchyard_period(p_period TEXT, p_at BIGINT, OUT o_start BIGINT, OUT o_end BIGINT)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  v_ts TIMESTAMP := to_timestamp(p_at / 1000.0) AT TIME ZONE 'UTC';
  v_start TIMESTAMP := date_trunc(p_period, v_ts);
BEGIN
  o_start := (extract(epoch FROM v_start) * 1000)::BIGINT;
  o_end := (extract(epoch FROM v_start + ('1 ' || p_period)::INTERVAL) * 1000)::BIGINT;
END
$fn$;

${CHARGE_V12}
${admitCharged('CREATE', ADMIT_DECIDE)}
CREATE FUNCTION switchyard_admit_batch(p_items JSONB, p_minute_ms BIGINT, p_day_ms BIGINT)
RETURNS TABLE (o_index INTEGER, o_error TEXT, o_admitted BOOLEAN, o_window TEXT,
  o_retry_at BIGINT, o_at BIGINT, o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT,
  o_day_first BIGINT, o_suspended_until BIGINT, o_charge JSONB)
LANGUAGE plpgsql AS $fn$
DECLARE
  it RECORD;
  r RECORD;
BEGIN
  FOR it IN
    SELECT * FROM jsonb_to_recordset(p_items) AS x(i INTEGER, account BIGINT, key TEXT, model TEXT,
      request TEXT, gateway TEXT, stream BOOLEAN, now BIGINT, rpm INTEGER, rpd INTEGER, susp_max INTEGER,
      susp_window_ms BIGINT, susp_ms BIGINT, charge JSONB)
    ORDER BY x.account, x.i
  LOOP
    o_index := it.i;
    BEGIN
      SELECT * INTO r FROM switchyard_admit_charged(it.account, it.key, it.model, it.request, it.gateway, it.stream,
        it.now, it.rpm, it.rpd, p_minute_ms, p_day_ms, it.susp_max, it.susp_window_ms, it.susp_ms, it.charge);
      o_error := NULL;
      o_admitted := r.o_admitted; o_window := r.o_window;
      o_retry_at := r.o_retry_at; o_at := r.o_at; o_minute_used := r.o_minute_used;
      o_minute_first := r.o_minute_first; o_day_used := r.o_day_used; o_day_first := r.o_day_first;
      o_suspended_until := r.o_suspended_until; o_charge := r.o_charge;
    EXCEPTION WHEN OTHERS THEN
      o_error := SQLERRM;
      o_admitted := NULL; o_window := NULL; o_retry_at := NULL; o_at := NULL;
      o_minute_used := NULL; o_minute_first := NULL; o_day_used := NULL; o_day_first := NULL;
      o_suspended_until := NULL; o_charge := NULL;
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;

CREATE FUNCTION switchyard_settle(p_items JSONB) RETURNS INTEGER LANGUAGE plpgsql AS $fn$
DECLARE
  it RECORD;
  v_n INTEGER := 0;
  v_shift INTEGER;
  v_period TEXT;
  v_scope TEXT;
  v_p RECORD;
BEGIN
  FOR it IN
    SELECT q.id, q.account_id, q.key_id, q.created_at, q.tokens, q.charge_micros, q.budgets,
      x.tokens AS new_tokens, x.micros AS new_micros
    FROM jsonb_to_recordset(p_items) AS x(id TEXT, tokens BIGINT, micros BIGINT)
    JOIN requests q ON q.gateway_id = x.id
    WHERE NOT q.settled
    ORDER BY q.account_id, q.id
  LOOP
    -- The admission's lock: a window sum is never moved by both at once, in the same order as
    -- admission batches take their accounts.
    PERFORM 1 FROM accounts a WHERE a.id = it.account_id FOR UPDATE;
    UPDATE requests q SET tokens = it.new_tokens, charge_micros = it.new_micros, settled = TRUE
      WHERE q.id = it.id AND NOT q.settled;
    IF NOT FOUND THEN CONTINUE; END IF;
    v_n := v_n + 1;
    IF it.new_tokens <> it.tokens THEN
      UPDATE limit_sums s SET used = s.used + (it.new_tokens - it.tokens)
        WHERE s.scope IN ('a:' || it.account_id, 'k:' || it.key_id) AND s.win IN ('tokens:minute', 'tokens:day')
          AND s.start < it.created_at;
    END IF;
    IF it.new_micros <> it.charge_micros THEN
      FOREACH v_shift IN ARRAY ARRAY[0, 2] LOOP
        v_period := CASE (it.budgets >> v_shift) & 3 WHEN 1 THEN 'day' WHEN 2 THEN 'week' WHEN 3 THEN 'month' END;
        IF v_period IS NULL THEN CONTINUE; END IF;
        v_scope := CASE WHEN v_shift = 0 THEN 'a:' || it.account_id ELSE 'k:' || it.key_id END;
        SELECT * INTO v_p FROM switchyard_period(v_period, it.created_at);
        UPDATE spend s SET micros = s.micros + (it.new_micros - it.charge_micros)
          WHERE s.scope = v_scope AND s.period = v_period AND s.start = v_p.o_start;
      END LOOP;
    END IF;
  END LOOP;
  RETURN v_n;
END
$fn$;

CREATE FUNCTION switchyard_sweep(p_before BIGINT, p_limit INTEGER) RETURNS INTEGER LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN switchyard_settle((
    SELECT COALESCE(jsonb_agg(jsonb_build_object('id', q.gateway_id, 'tokens', 0, 'micros', 0)), '[]'::JSONB)
    FROM (SELECT gateway_id FROM requests WHERE NOT settled AND created_at < p_before
          ORDER BY created_at LIMIT p_limit) q));
END
$fn$;
`

/**
 * `switchyard_admit_charged`'s text with the request windows' decision `decide` (admit-sql.ts):
 * v12 creates it with `ADMIT_DECIDE`, v14 replaces it with `ADMIT_DECIDE_V14`.
 */
export function admitCharged(create: 'CREATE' | 'CREATE OR REPLACE', decide: string): string {
  return `${create} FUNCTION switchyard_admit_charged(
  p_account BIGINT, p_key TEXT, p_model TEXT, p_request TEXT, p_gateway TEXT, p_stream BOOLEAN, p_now BIGINT,
  p_rpm INTEGER, p_rpd INTEGER, p_minute_ms BIGINT, p_day_ms BIGINT,
  p_susp_max INTEGER, p_susp_window_ms BIGINT, p_susp_ms BIGINT, p_charge JSONB)
RETURNS TABLE (o_admitted BOOLEAN, o_window TEXT, o_retry_at BIGINT, o_at BIGINT,
  o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT, o_day_first BIGINT,
  o_suspended_until BIGINT, o_charge JSONB)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_now BIGINT;
  v_seq BIGINT;
  v_last_at BIGINT;
  v_first_seq BIGINT;
  v_first_at BIGINT;
  v_limit INTEGER;
  v_span BIGINT;
  v_n INTEGER;
BEGIN
  SELECT a.admit_seq, a.admit_at INTO v_seq, v_last_at FROM accounts a WHERE a.id = p_account FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'account % not found', p_account; END IF;
  v_now := GREATEST(COALESCE(p_now, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT), v_last_at);
${decide}  o_at := v_now;
  IF p_charge IS NOT NULL THEN
    o_charge := switchyard_charge(p_account, p_key, v_now, p_charge, p_minute_ms, p_day_ms);
    IF NOT (o_charge->>'ok')::BOOLEAN THEN
      o_admitted := FALSE;
      o_window := CASE WHEN p_charge->'rows'->((o_charge->>'i')::INTEGER)->>'window' = 'minute' THEN 'minute' ELSE 'day' END;
      o_retry_at := COALESCE((o_charge->>'retry')::BIGINT, v_now);
      IF p_susp_max IS NOT NULL THEN
        UPDATE api_keys k SET
          rejections = CASE WHEN k.rejections_since IS NULL OR k.rejections_since <= v_now - p_susp_window_ms
                            THEN 1 ELSE k.rejections + 1 END,
          rejections_since = CASE WHEN k.rejections_since IS NULL OR k.rejections_since <= v_now - p_susp_window_ms
                            THEN v_now ELSE k.rejections_since END
          WHERE k.id = p_key RETURNING k.rejections INTO v_n;
        IF v_n > p_susp_max THEN
          o_suspended_until := v_now + p_susp_ms;
          UPDATE api_keys k SET suspended_until = o_suspended_until, rejections = 0, rejections_since = NULL
            WHERE k.id = p_key;
        END IF;
      END IF;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;
  v_seq := v_seq + 1;
  INSERT INTO requests (gateway_id, request_id, account_id, key_id, model, stream, created_at, seq,
      tokens, charge_micros, budgets, settled)
    VALUES (p_gateway, p_request, p_account, p_key, p_model, p_stream, o_at, v_seq,
      COALESCE((o_charge->>'tokens')::BIGINT, 0), COALESCE((o_charge->>'micros')::BIGINT, 0),
      COALESCE((o_charge->>'budgets')::INTEGER, 0), NOT COALESCE((o_charge->>'settles')::BOOLEAN, FALSE));
  UPDATE accounts a SET admit_seq = v_seq, admit_at = o_at WHERE a.id = p_account;
  o_admitted := TRUE;
  RETURN NEXT;
END
$fn$;
`
}
