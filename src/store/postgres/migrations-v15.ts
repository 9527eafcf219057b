/**
 * @module
 * PostgreSQL schema v15: an admission that fails inside a group commit keeps its SQLSTATE.
 * `switchyard_admit_batch` (v12) runs each admission in a subtransaction and caught a failure as
 * `SQLERRM` alone, so one that lost a deadlock (40P01) or a serialization failure (40001) — a
 * conflict PostgreSQL advises running again — reached the gateway as an error no retry fixes
 * (a 500). v15 replaces it (CREATE OR REPLACE, same signature) with v12's text word for word
 * but that line: `o_error` is now `SQLSTATE || ' ' || SQLERRM` (five characters, a space, the
 * message), which admit-batch.ts reads back into the store's error (`pgBusy`, bounded.ts: 40001
 * and 40P01 are 503 `store_busy`). Nothing stored changes. No migration between v12 and this one
 * replaced the function.
 */

export const ITEM_STATE_V15 = `
CREATE OR REPLACE FUNCTION switchyard_admit_batch(p_items JSONB, p_minute_ms BIGINT, p_day_ms BIGINT)
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
      o_error := SQLSTATE || ' ' || SQLERRM;
      o_admitted := NULL; o_window := NULL; o_retry_at := NULL; o_at := NULL;
      o_minute_used := NULL; o_minute_first := NULL; o_day_used := NULL; o_day_first := NULL;
      o_suspended_until := NULL; o_charge := NULL;
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
`
