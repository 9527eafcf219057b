/**
 * @module
 * The part of `switchyard_admit` that every PostgreSQL migration defining it shares, word for
 * word: count both windows, pick the one that refuses, give its retry time and count the key's
 * refusal toward suspension. Migrations v1, v2, v5 and v12 splice in `ADMIT_DECIDE`; changing it
 * would change the SQL of landed migrations, so a new rule gets a text of its own: v14's
 * `ADMIT_DECIDE_V14` (with both windows full, the retry time is the later of the two, DESIGN §5:
 * "until a request would be admitted").
 */

/**
 * One window's count (`o_<w>_used`, `o_<w>_first`): the requests numbered since its oldest
 * admission inside it, when its limit `p_<limit>` is set. `w`: minute or day.
 */
const countWindow = (
  w: 'minute' | 'day',
  limit: 'rpm' | 'rpd',
) => `  IF p_${limit} IS NOT NULL AND v_seq > 0 THEN
    SELECT r.seq, r.created_at INTO v_first_seq, v_first_at FROM requests r
      WHERE r.account_id = p_account AND r.created_at > v_now - p_${w}_ms AND r.seq IS NOT NULL
      ORDER BY r.created_at, r.seq LIMIT 1;
    IF FOUND THEN o_${w}_used := v_seq - v_first_seq + 1; o_${w}_first := v_first_at; END IF;
  END IF;
`

/** The windows' counts (o_minute_used, o_day_used, their oldest admissions). */
const COUNT = `  o_minute_used := 0;
  o_day_used := 0;
${countWindow('minute', 'rpm')}${countWindow('day', 'rpd')}  o_at := v_now;
`

/** v1–v12: the first full window refuses, minute before day, with its retry time. */
const DECIDE = `  IF p_rpm IS NOT NULL AND o_minute_used >= p_rpm THEN
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
`

/** Counts the key's refusal toward suspension (fixed windows per key that start at the first refusal). */
const SUSPEND = `    IF p_susp_max IS NOT NULL THEN
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
`

const RETURN_REFUSED = `    RETURN NEXT;
    RETURN;
  END IF;
`

/** Expects v_now, v_seq and the declared v_* variables; refuses with `RETURN NEXT; RETURN;`. */
export const ADMIT_DECIDE = `${COUNT}${DECIDE}${SUSPEND}${RETURN_REFUSED}`

/** v14: with both windows full, the later retry time (and its window). */
const DECIDE_V14 = `  IF p_rpm IS NOT NULL AND o_minute_used >= p_rpm THEN
    -- The window admits again once the request numbered last − limit + 1 has left it.
    SELECT r.created_at INTO v_first_at FROM requests r
      WHERE r.account_id = p_account AND r.seq = v_seq - p_rpm + 1;
    o_window := 'minute'; o_retry_at := v_first_at + p_minute_ms;
  END IF;
  IF p_rpd IS NOT NULL AND o_day_used >= p_rpd THEN
    SELECT r.created_at INTO v_first_at FROM requests r
      WHERE r.account_id = p_account AND r.seq = v_seq - p_rpd + 1;
    -- Until a request would be admitted: with both windows full, the later of the two.
    IF o_retry_at IS NULL OR v_first_at + p_day_ms > o_retry_at THEN
      o_window := 'day'; o_retry_at := v_first_at + p_day_ms;
    END IF;
  END IF;
  IF o_window IS NOT NULL THEN
    o_admitted := FALSE;
`

/** As `ADMIT_DECIDE`, but with both windows full the later retry time (and its window) is given. */
export const ADMIT_DECIDE_V14 = `${COUNT}${DECIDE_V14}${SUSPEND}${RETURN_REFUSED}`
