/**
 * @module
 * PostgreSQL schema v17: output reservations that grow as the answer arrives (DESIGN §11).
 * `switchyard_extend` grows a live reservation by `p_tokens` on every token row and `p_micros` on
 * every money row it holds, all or nothing, under the account's lock (the lock admission and
 * settlement take, so N replicas grow exactly what one process would):
 * - each row's use is read as `switchyard_charge` reads it (a window's running sum in `limit_sums`
 *   moved to the window's edge, a period's spend);
 * - when every row leaves room, the admission row's `tokens` and `charge_micros` grow, and every
 *   window sum that still holds the charge and the charge's period spend grow with them, as
 *   `switchyard_settle` moves them for a settlement above the reservation. Settlement and the
 *   sweep (v14: settled to itself) then work from the grown row.
 * Returns `{ ok, live, states: [{ used, remaining, reset }] }`, the states before the growth; a
 * reservation settled already (or unknown) is `live: false` and grows nothing.
 */

export const EXTEND_V17 = `
CREATE FUNCTION switchyard_extend(p_gateway TEXT, p_rows JSONB, p_tokens BIGINT, p_micros BIGINT, p_now BIGINT,
  p_minute_ms BIGINT, p_day_ms BIGINT)
RETURNS JSONB LANGUAGE plpgsql AS $fn$
DECLARE
  q RECORD;
  r RECORD;
  v_now BIGINT;
  v_scope TEXT;
  v_win TEXT;
  v_span BIGINT;
  v_edge BIGINT;
  v_start BIGINT;
  v_used BIGINT;
  v_found BOOLEAN;
  v_first BIGINT;
  v_reset BIGINT;
  v_left BIGINT;
  v_p RECORD;
  v_ok BOOLEAN := TRUE;
  v_states JSONB := '[]'::JSONB;
  v_shift INTEGER;
  v_period TEXT;
BEGIN
  SELECT x.account_id INTO q FROM requests x WHERE x.gateway_id = p_gateway;
  IF NOT FOUND THEN RETURN jsonb_build_object('ok', FALSE, 'live', FALSE, 'states', '[]'::JSONB); END IF;
  -- The admission's lock, then the row as it stands under it (a settlement may have come first).
  SELECT a.admit_at INTO v_now FROM accounts a WHERE a.id = q.account_id FOR UPDATE;
  SELECT x.id, x.account_id, x.key_id, x.created_at, x.budgets, x.settled INTO q
    FROM requests x WHERE x.gateway_id = p_gateway;
  IF q.settled THEN RETURN jsonb_build_object('ok', FALSE, 'live', FALSE, 'states', '[]'::JSONB); END IF;
  v_now := GREATEST(COALESCE(p_now, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT), v_now);
  FOR r IN SELECT * FROM jsonb_to_recordset(p_rows)
      AS x(resource TEXT, "window" TEXT, period TEXT, scope TEXT, capacity BIGINT) LOOP
    v_scope := CASE WHEN r.scope = 'account' THEN 'a:' || q.account_id ELSE 'k:' || q.key_id END;
    v_first := NULL;
    IF r."window" = 'period' THEN
      SELECT * INTO v_p FROM switchyard_period(r.period, v_now);
      SELECT s.micros INTO v_used FROM spend s WHERE s.scope = v_scope AND s.period = r.period AND s.start = v_p.o_start;
      v_used := COALESCE(v_used, 0);
      v_reset := v_p.o_end;
    ELSE
      v_span := CASE WHEN r."window" = 'minute' THEN p_minute_ms ELSE p_day_ms END;
      v_edge := v_now - v_span;
      v_win := r.resource || ':' || r."window";
      SELECT s.start, s.used INTO v_start, v_used FROM limit_sums s WHERE s.scope = v_scope AND s.win = v_win FOR UPDATE;
      v_found := FOUND;
      IF NOT v_found OR v_edge > v_start THEN
        IF v_found AND v_start + v_span > v_edge THEN
          SELECT v_used - COALESCE(SUM(CASE WHEN r.resource = 'requests' THEN 1 ELSE x.tokens END), 0) INTO v_used
            FROM requests x WHERE x.account_id = q.account_id AND x.created_at > v_start AND x.created_at <= v_edge
              AND (r.scope = 'account' OR x.key_id = q.key_id) AND (r.resource = 'requests' OR x.tokens > 0);
        ELSE
          SELECT COALESCE(SUM(CASE WHEN r.resource = 'requests' THEN 1 ELSE x.tokens END), 0) INTO v_used
            FROM requests x WHERE x.account_id = q.account_id AND x.created_at > v_edge
              AND (r.scope = 'account' OR x.key_id = q.key_id) AND (r.resource = 'requests' OR x.tokens > 0);
        END IF;
        INSERT INTO limit_sums AS s (scope, win, start, used) VALUES (v_scope, v_win, v_edge, v_used)
          ON CONFLICT (scope, win) DO UPDATE SET start = excluded.start, used = excluded.used;
      END IF;
      IF v_used > 0 THEN
        SELECT MIN(x.created_at) INTO v_first FROM requests x WHERE x.account_id = q.account_id
          AND x.created_at > v_edge AND (r.scope = 'account' OR x.key_id = q.key_id)
          AND (r.resource = 'requests' OR x.tokens > 0);
      END IF;
      v_reset := CASE WHEN v_first IS NULL THEN NULL ELSE v_first + v_span END;
    END IF;
    v_left := GREATEST(0, r.capacity - v_used);
    v_states := v_states || jsonb_build_object('used', v_used, 'remaining', v_left, 'reset', v_reset);
    IF (r.resource = 'tokens' AND v_left < p_tokens) OR (r.resource = 'microdollars' AND v_left < p_micros) THEN
      v_ok := FALSE;
    END IF;
  END LOOP;
  IF NOT v_ok THEN RETURN jsonb_build_object('ok', FALSE, 'live', TRUE, 'states', v_states); END IF;
  UPDATE requests x SET tokens = x.tokens + p_tokens, charge_micros = x.charge_micros + p_micros WHERE x.id = q.id;
  IF p_tokens <> 0 THEN
    UPDATE limit_sums s SET used = s.used + p_tokens
      WHERE s.scope IN ('a:' || q.account_id, 'k:' || q.key_id) AND s.win IN ('tokens:minute', 'tokens:day')
        AND s.start < q.created_at;
  END IF;
  IF p_micros <> 0 THEN
    FOREACH v_shift IN ARRAY ARRAY[0, 2] LOOP
      v_period := CASE (q.budgets >> v_shift) & 3 WHEN 1 THEN 'day' WHEN 2 THEN 'week' WHEN 3 THEN 'month' END;
      IF v_period IS NULL THEN CONTINUE; END IF;
      v_scope := CASE WHEN v_shift = 0 THEN 'a:' || q.account_id ELSE 'k:' || q.key_id END;
      SELECT * INTO v_p FROM switchyard_period(v_period, q.created_at);
      UPDATE spend s SET micros = s.micros + p_micros
        WHERE s.scope = v_scope AND s.period = v_period AND s.start = v_p.o_start;
    END LOOP;
  END IF;
  RETURN jsonb_build_object('ok', TRUE, 'live', TRUE, 'states', v_states, 'at', v_now);
END
$fn$;
`
