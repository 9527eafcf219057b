/**
 * @module
 * The part of `switchyard_admit` that every PostgreSQL migration defining it shares, word for
 * word: count both windows, pick the one that refuses, give its retry time and count the key's
 * refusal toward suspension. Migrations v1, v2 and v5 splice it in; changing it would change
 * the SQL of landed migrations, so a new rule needs a new migration with its own text.
 */

/** Expects v_now, v_seq and the declared v_* variables; refuses with `RETURN NEXT; RETURN;`. */
export const ADMIT_DECIDE = `  o_minute_used := 0;
  o_day_used := 0;
  IF p_rpm IS NOT NULL AND v_seq > 0 THEN
    SELECT r.seq, r.created_at INTO v_first_seq, v_first_at FROM requests r
      WHERE r.account_id = p_account AND r.created_at > v_now - p_minute_ms AND r.seq IS NOT NULL
      ORDER BY r.created_at, r.seq LIMIT 1;
    IF FOUND THEN o_minute_used := v_seq - v_first_seq + 1; o_minute_first := v_first_at; END IF;
  END IF;
  IF p_rpd IS NOT NULL AND v_seq > 0 THEN
    SELECT r.seq, r.created_at INTO v_first_seq, v_first_at FROM requests r
      WHERE r.account_id = p_account AND r.created_at > v_now - p_day_ms AND r.seq IS NOT NULL
      ORDER BY r.created_at, r.seq LIMIT 1;
    IF FOUND THEN o_day_used := v_seq - v_first_seq + 1; o_day_first := v_first_at; END IF;
  END IF;
  o_at := v_now;
  IF p_rpm IS NOT NULL AND o_minute_used >= p_rpm THEN
    o_window := 'minute'; v_limit := p_rpm; v_span := p_minute_ms;
  ELSIF p_rpd IS NOT NULL AND o_day_used >= p_rpd THEN
    o_window := 'day'; v_limit := p_rpd; v_span := p_day_ms;
  END IF;
  IF o_window IS NOT NULL THEN
    -- The window admits again once the request numbered last − limit + 1 has left it.
    SELECT r.created_at INTO v_first_at FROM requests r
      WHERE r.account_id = p_account AND r.seq = v_seq - v_limit + 1;
    o_retry_at := v_first_at + v_span;
    o_admitted := FALSE;
    IF p_susp_max IS NOT NULL THEN
      -- Fixed windows per key that start at the first refusal.
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
`
