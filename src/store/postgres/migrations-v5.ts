/**
 * @module
 * PostgreSQL schema v5: usage rows keyed by the gateway's request id (clients' own x-request-ids
 * may repeat). The bigserial stays the physical key (cheap appends, the request log's cursor);
 * `gateway_id` is a UNIQUE column that the admission writes and outcomes are matched by. Rows
 * from before get an id no new one can have. The admission functions take the id and no longer
 * return the bigserial, so they are dropped and created again (their return type changes).
 */

import { ADMIT_DECIDE } from './admit-sql.ts'

export const GATEWAY_ID_V5 = `
ALTER TABLE requests ADD COLUMN gateway_id TEXT;
UPDATE requests SET gateway_id = 'legacy_' || id;
ALTER TABLE requests ALTER COLUMN gateway_id SET NOT NULL;
CREATE UNIQUE INDEX requests_gateway_id ON requests(gateway_id);
DROP FUNCTION switchyard_admit_many(JSONB, BIGINT, BIGINT);
DROP FUNCTION switchyard_admit(BIGINT, TEXT, TEXT, TEXT, BOOLEAN, BIGINT, INTEGER, INTEGER, BIGINT, BIGINT,
  INTEGER, BIGINT, BIGINT);
-- The admission, in one round trip and one transaction. Windows are exact sliding logs: the
-- number of requests in a window is admit_seq − (seq of the oldest row inside it) + 1.
-- p_now NULL = the database server's clock (one clock for every replica).
CREATE FUNCTION switchyard_admit(
  p_account BIGINT, p_key TEXT, p_model TEXT, p_request TEXT, p_gateway TEXT, p_stream BOOLEAN, p_now BIGINT,
  p_rpm INTEGER, p_rpd INTEGER, p_minute_ms BIGINT, p_day_ms BIGINT,
  p_susp_max INTEGER, p_susp_window_ms BIGINT, p_susp_ms BIGINT)
RETURNS TABLE (o_admitted BOOLEAN, o_window TEXT, o_retry_at BIGINT, o_at BIGINT,
  o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT, o_day_first BIGINT,
  o_suspended_until BIGINT)
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
  -- Waits for any admission of this account in flight on another connection, and holds the
  -- lock until commit: a window cannot be counted by two admissions at once.
  SELECT a.admit_seq, a.admit_at INTO v_seq, v_last_at FROM accounts a WHERE a.id = p_account FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'account % not found', p_account; END IF;
  -- Read the clock once the lock is ours: time spent waiting for it must not make this
  -- decision older than the admission it waited for (retry-after would exceed the window).
  v_now := GREATEST(COALESCE(p_now, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT), v_last_at);
${ADMIT_DECIDE}  -- Times never go backwards within an account (v_now is at least admit_at).
  o_at := v_now;
  v_seq := v_seq + 1;
  INSERT INTO requests (gateway_id, request_id, account_id, key_id, model, stream, created_at, seq)
    VALUES (p_gateway, p_request, p_account, p_key, p_model, p_stream, o_at, v_seq);
  UPDATE accounts a SET admit_seq = v_seq, admit_at = o_at WHERE a.id = p_account;
  o_admitted := TRUE;
  RETURN NEXT;
END
$fn$;
-- Group commit: the admissions one process asks for in the same event-loop turn, in one round
-- trip and one transaction (one commit, one WAL flush). Each runs in its own subtransaction, so
-- a failing one fails alone. Accounts are locked in ascending id order, so two batches (from two
-- replicas) never wait for each other in a cycle.
CREATE FUNCTION switchyard_admit_many(p_items JSONB, p_minute_ms BIGINT, p_day_ms BIGINT)
RETURNS TABLE (o_index INTEGER, o_error TEXT, o_admitted BOOLEAN, o_window TEXT,
  o_retry_at BIGINT, o_at BIGINT, o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT,
  o_day_first BIGINT, o_suspended_until BIGINT)
LANGUAGE plpgsql AS $fn$
DECLARE
  it RECORD;
  r RECORD;
BEGIN
  FOR it IN
    SELECT * FROM jsonb_to_recordset(p_items) AS x(i INTEGER, account BIGINT, key TEXT, model TEXT,
      request TEXT, gateway TEXT, stream BOOLEAN, now BIGINT, rpm INTEGER, rpd INTEGER, susp_max INTEGER,
      susp_window_ms BIGINT, susp_ms BIGINT)
    ORDER BY x.account, x.i
  LOOP
    o_index := it.i;
    BEGIN
      SELECT * INTO r FROM switchyard_admit(it.account, it.key, it.model, it.request, it.gateway, it.stream, it.now,
        it.rpm, it.rpd, p_minute_ms, p_day_ms, it.susp_max, it.susp_window_ms, it.susp_ms);
      o_error := NULL;
      o_admitted := r.o_admitted; o_window := r.o_window;
      o_retry_at := r.o_retry_at; o_at := r.o_at; o_minute_used := r.o_minute_used;
      o_minute_first := r.o_minute_first; o_day_used := r.o_day_used; o_day_first := r.o_day_first;
      o_suspended_until := r.o_suspended_until;
    EXCEPTION WHEN OTHERS THEN
      o_error := SQLERRM;
      o_admitted := NULL; o_window := NULL; o_retry_at := NULL; o_at := NULL;
      o_minute_used := NULL; o_minute_first := NULL; o_day_used := NULL; o_day_first := NULL;
      o_suspended_until := NULL;
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;`
