-- pgTAP: every function of the API given bad input -- NULL in each argument, empty and 1 MB
-- texts, bytes invalid in the encoding, extreme integers and ids, zero, negative, infinite and
-- huge intervals, empty and NULL-holding arrays -- answers with the SQLSTATE the README
-- documents, or with its documented result: never a crash, an internal error (XX000) or a
-- silent NULL. Runs in one transaction that is rolled back; the session-level advisory locks it
-- takes are unlocked again before the end. One exception: sem_stats_reset() forgets counters in
-- shared memory, which no rollback brings back (this database's only).
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(402);

-- One row per call: the SQLSTATE it must raise ('SQLSTATE 22023'), or its answer as text
-- ('NULL' for NULL, '' for void). A 1 MB text is written repeat('x', 1048576), so that the
-- descriptions stay short.
CREATE TEMP TABLE bad_input (ord serial, call text, expected text) ON COMMIT DROP;

-- The answer of a call as text; an error as 'SQLSTATE xxxxx: message', so that a wrong answer
-- fails its test instead of ending the file.
CREATE FUNCTION pg_temp.answer(call text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    EXECUTE 'SELECT (' || call || ')::text' INTO result;
    RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
    RETURN 'SQLSTATE ' || SQLSTATE || ': ' || SQLERRM;
END
$$;

------------------------------------------------------------------------------------------------
-- 1. fnv1a_64: strict (NULL gives NULL); every byte string is a key, empty and 1 MB too. Bytes
--    invalid in the encoding cannot reach fnv1a_64(text) (convert_from refuses them, 22021;
--    in a UTF8 database so does the parser); they reach fnv1a_64(bytea) and hash as bytes.
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected) VALUES
    ($$fnv1a_64(NULL::text)$$, 'NULL'),
    ($$fnv1a_64(NULL::bytea)$$, 'NULL'),
    ($$fnv1a_64(''::text)$$, '-3750763034362895579'),
    ($$fnv1a_64(''::bytea)$$, '-3750763034362895579'),
    ($$fnv1a_64(repeat('x', 1048576))$$, '9181027699964125989'),
    ($$fnv1a_64(convert_to(repeat('x', 1048576), 'UTF8'))$$, '9181027699964125989'),
    ($$fnv1a_64('\xff'::bytea)$$, '-5808391946409677970'),
    ($$fnv1a_64('\xc328'::bytea)$$, '775347045741950414'),
    ($$fnv1a_64(convert_from('\xc328'::bytea, 'UTF8'))$$, 'SQLSTATE 22021'),
    ($$advisory_lock_text(convert_from('\xff'::bytea, 'UTF8'))$$, 'SQLSTATE 22021'),
    ($$sem_claim(convert_from('\xff'::bytea, 'UTF8'), 1)$$, 'SQLSTATE 22021');

------------------------------------------------------------------------------------------------
-- 2. The ten text-keyed advisory locks: NULL is 22004; empty and 1 MB keys are ordinary keys.
--    Session locks taken here are unlocked right after (a rollback does not end them).
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected)
SELECT format('%I(NULL)', f), 'SQLSTATE 22004'
  FROM unnest(ARRAY['advisory_lock_text', 'advisory_lock_text_shared',
                    'advisory_try_lock_text', 'advisory_try_lock_text_shared',
                    'advisory_session_lock_text', 'advisory_session_lock_text_shared',
                    'advisory_session_try_lock_text', 'advisory_session_try_lock_text_shared',
                    'advisory_session_unlock_text', 'advisory_session_unlock_text_shared']) f;
INSERT INTO bad_input (call, expected)
SELECT format('%I(%s)', f, k), r
  FROM unnest(ARRAY[$$''$$, $$repeat('x', 1048576)$$]) k,
       (VALUES (1, 'advisory_lock_text', ''), (2, 'advisory_lock_text_shared', ''),
               (3, 'advisory_try_lock_text', 'true'), (4, 'advisory_try_lock_text_shared', 'true'),
               (5, 'advisory_session_lock_text', ''),
               (6, 'advisory_session_unlock_text', 'true'),
               (7, 'advisory_session_lock_text_shared', ''),
               (8, 'advisory_session_unlock_text_shared', 'true'),
               (9, 'advisory_session_try_lock_text', 'true'),
               (10, 'advisory_session_unlock_text', 'true'),
               (11, 'advisory_session_try_lock_text_shared', 'true'),
               (12, 'advisory_session_unlock_text_shared', 'true'),
               (13, 'advisory_session_unlock_text', 'false')) v(o, f, r)
 ORDER BY k DESC, o;

------------------------------------------------------------------------------------------------
-- 3. sem_claim, sem_claim_xact, sem_claim_session: 22004 for NULL, 22023 out of range
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected) VALUES
    ($$sem_claim(NULL, 1)$$, 'SQLSTATE 22004'),
    ($$sem_claim('bi', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_claim('bi', 1, NULL)$$, 'SQLSTATE 22004'),
    ($$sem_claim('bi', 1, '1 minute', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_claim('bi', 1, '1 minute', '0', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_claim('', 1)$$, 'SQLSTATE 22023'),
    ($$sem_claim(repeat('x', 1048576), 1)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 0)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', -1)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_claim('bi', 1, '-infinity')$$, 'SQLSTATE 22007'),
    ($$sem_claim('bi', 1, '1 minute', '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '0', 0)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '0', -1)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '0', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '0', 1, '')$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '0', 1, repeat('x', 1048576))$$, 'SQLSTATE 22023'),
    ($$sem_claim('bi', 1, '1 minute', '0', 1, NULL) > 0$$, 'true'),
    ($$sem_claim('bi-wait0', 1, '1 minute', '0') > 0$$, 'true');

INSERT INTO bad_input (call, expected)
SELECT format('%s(%s)', f, a), e
  FROM unnest(ARRAY['sem_claim_xact', 'sem_claim_session']) f,
       (VALUES (1, $$NULL, 1$$, 'SQLSTATE 22004'),
               (2, $$'bi', NULL$$, 'SQLSTATE 22004'),
               (3, $$'bi', 1, NULL$$, 'SQLSTATE 22004'),
               (4, $$'bi', 1, '0', NULL$$, 'SQLSTATE 22004'),
               (5, $$'', 1$$, 'SQLSTATE 22023'),
               (6, $$repeat('x', 1048576), 1$$, 'SQLSTATE 22023'),
               (7, $$'bi', 0$$, 'SQLSTATE 22023'),
               (8, $$'bi', -1$$, 'SQLSTATE 22023'),
               (9, $$'bi', 2147483647$$, 'SQLSTATE 22023'),
               (10, $$'bi', 1, '-1 second'$$, 'SQLSTATE 22023'),
               (11, $$'bi', 1, '1000000 years'$$, 'SQLSTATE 22023'),
               (12, $$'bi', 1, '-1000000 years'$$, 'SQLSTATE 22023'),
               (13, $$'bi', 1, 'infinity'$$, 'SQLSTATE 22007'),
               (14, $$'bi', 1, '0', 0$$, 'SQLSTATE 22023'),
               (15, $$'bi', 1, '0', -1$$, 'SQLSTATE 22023'),
               (16, $$'bi', 1, '0', 2147483647$$, 'SQLSTATE 22023'),
               (17, $$'bi-' || 'FN', 1, '0'$$, '0')) v(o, a, e)
 ORDER BY f DESC, o;
UPDATE bad_input SET call = replace(call, $$'bi-' || 'FN'$$, format('%L', 'bi-' || split_part(call, '(', 1)))
 WHERE call LIKE $$%'bi-' || 'FN'%$$;

------------------------------------------------------------------------------------------------
-- 4. sem_release_session, sem_release, sem_renew, sem_held, sem_fence, sem_prune_history
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected) VALUES
    ($$sem_release_session(NULL, 0)$$, 'SQLSTATE 22004'),
    ($$sem_release_session('bi', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_release_session('', 0)$$, 'SQLSTATE 22023'),
    ($$sem_release_session(repeat('x', 1048576), 0)$$, 'SQLSTATE 22023'),
    ($$sem_release_session('bi', 0)$$, 'false'),
    ($$sem_release_session('bi', 999999)$$, 'false'),
    -- a slot outside [0, 1,000,000) is out of range: 22023, as for every argument (the
    -- README's table says "false otherwise", its Arguments rule 22023)
    ($$sem_release_session('bi', -1)$$, 'SQLSTATE 22023'),
    ($$sem_release_session('bi', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_release(NULL)$$, 'NULL'),
    ($$sem_release(0)$$, 'false'),
    ($$sem_release(-1)$$, 'false'),
    ($$sem_release(9223372036854775807)$$, 'false'),
    ($$sem_release(-9223372036854775808)$$, 'false'),
    ($$sem_held(NULL)$$, 'NULL'),
    ($$sem_held(0)$$, 'false'),
    ($$sem_held(-1)$$, 'false'),
    ($$sem_held(9223372036854775807)$$, 'false'),
    ($$sem_held(-9223372036854775808)$$, 'false'),
    ($$sem_renew(NULL)$$, 'NULL'),
    ($$sem_renew(NULL, NULL)$$, 'NULL'),
    ($$sem_renew(0)$$, 'false'),
    ($$sem_renew(-1, '1 minute')$$, 'false'),
    ($$sem_renew(9223372036854775807)$$, 'false'),
    ($$sem_renew(-9223372036854775808)$$, 'false'),
    ($$sem_renew(1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_renew(1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_renew(1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_renew(1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_renew(1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_renew(1, '-infinity')$$, 'SQLSTATE 22007'),
    ($$sem_fence(NULL)$$, 'SQLSTATE 22004'),
    ($$sem_fence(0)$$, 'SQLSTATE 42704'),
    ($$sem_fence(-1)$$, 'SQLSTATE 42704'),
    ($$sem_fence(9223372036854775807)$$, 'SQLSTATE 42704'),
    ($$sem_fence(-9223372036854775808)$$, 'SQLSTATE 42704'),
    ($$sem_prune_history(NULL)$$, 'SQLSTATE 22004'),
    ($$sem_prune_history(-1)$$, 'SQLSTATE 22023'),
    ($$sem_prune_history(-9223372036854775808)$$, 'SQLSTATE 22023'),
    ($$sem_prune_history(0)$$, '0'),
    ($$sem_prune_history(9223372036854775807) >= 0$$, 'true');

------------------------------------------------------------------------------------------------
-- 5. The sets: NULL, empty and NULL-holding arrays, and each element checked as for one claim.
--    README: names of 1 to 64 elements (22023 otherwise), ns and permits of the same length
--    (2202E otherwise).
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected)
SELECT format('%s(%s)', f, a), e
  FROM unnest(ARRAY['sem_claim_all', 'sem_claim_xact_all', 'sem_claim_session_all']) f,
       (VALUES (1, $$NULL, ARRAY[1]$$, 'SQLSTATE 22004'),
               (2, $$ARRAY['bi'], NULL$$, 'SQLSTATE 22004'),
               (3, $$'{}', '{}'$$, 'SQLSTATE 22023'),
               (4, $$'{}', ARRAY[1]$$, 'SQLSTATE 22023'),
               (5, $$ARRAY['bi'], '{}'$$, 'SQLSTATE 2202E'),
               (6, $$ARRAY[NULL]::text[], ARRAY[1]$$, 'SQLSTATE 22004'),
               (7, $$ARRAY['bi', NULL], ARRAY[1, 1]$$, 'SQLSTATE 22004'),
               (8, $$ARRAY['bi'], ARRAY[NULL]::int[]$$, 'SQLSTATE 22004'),
               (9, $$ARRAY['bi', 'bi2'], ARRAY[1, NULL]$$, 'SQLSTATE 22004'),
               (10, $$ARRAY[''], ARRAY[1]$$, 'SQLSTATE 22023'),
               (11, $$ARRAY[repeat('x', 1048576)], ARRAY[1]$$, 'SQLSTATE 22023'),
               (12, $$ARRAY['bi'], ARRAY[0]$$, 'SQLSTATE 22023'),
               (13, $$ARRAY['bi'], ARRAY[-1]$$, 'SQLSTATE 22023'),
               (14, $$ARRAY['bi'], ARRAY[2147483647]$$, 'SQLSTATE 22023'),
               (15, $$ARRAY['bi', 'bi'], ARRAY[1, 1]$$, 'SQLSTATE 22023'),
               (16, $$ARRAY['bi'], ARRAY[1, 1]$$, 'SQLSTATE 2202E'),
               (17, $$ARRAY[['bi']], ARRAY[[1]]$$, 'SQLSTATE 2202E'),
               (28, $$array_fill('bi'::text, ARRAY[65]), array_fill(1, ARRAY[65])$$, 'SQLSTATE 22023'),
               (18, $$ARRAY['bi'], ARRAY[1], permits => '{}'$$, 'SQLSTATE 2202E'),
               (19, $$ARRAY['bi'], ARRAY[1], permits => ARRAY[NULL]::int[]$$, 'SQLSTATE 22004'),
               (20, $$ARRAY['bi'], ARRAY[1], permits => ARRAY[0]$$, 'SQLSTATE 22023'),
               (21, $$ARRAY['bi'], ARRAY[1], permits => ARRAY[-1]$$, 'SQLSTATE 22023'),
               (22, $$ARRAY['bi'], ARRAY[1], permits => ARRAY[2147483647]$$, 'SQLSTATE 22023'),
               (23, $$ARRAY['bi'], ARRAY[1], wait => NULL$$, 'SQLSTATE 22004'),
               (24, $$ARRAY['bi'], ARRAY[1], wait => '-1 second'$$, 'SQLSTATE 22023'),
               (25, $$ARRAY['bi'], ARRAY[1], wait => '1000000 years'$$, 'SQLSTATE 22023'),
               (26, $$ARRAY['bi'], ARRAY[1], wait => '-1000000 years'$$, 'SQLSTATE 22023'),
               (27, $$ARRAY['bi'], ARRAY[1], wait => 'infinity'$$, 'SQLSTATE 22007')) v(o, a, e)
 ORDER BY f, o;
INSERT INTO bad_input (call, expected) VALUES
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], NULL)$$, 'SQLSTATE 22004'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], '0')$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], request_key => '')$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], request_key => repeat('x', 1048576))$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], pers => '{}')$$, 'SQLSTATE 2202E'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], pers => ARRAY['0']::interval[])$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], pers => ARRAY['-1 second']::interval[])$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], pers => ARRAY['1000000 years']::interval[])$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi'], ARRAY[1], pers => ARRAY['-1000000 years']::interval[])$$, 'SQLSTATE 22023'),
    ($$sem_claim_all(ARRAY['bi-set'], ARRAY[1], pers => ARRAY[NULL]::interval[]) IS NOT NULL$$, 'true'),
    ($$sem_claim_all(ARRAY['bi-set2'], ARRAY[1], request_key => NULL) IS NOT NULL$$, 'true');

------------------------------------------------------------------------------------------------
-- 6. Declarations and grants
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected) VALUES
    ($$sem_declare(NULL, 1)$$, 'SQLSTATE 22004'),
    ($$sem_declare('bi-d', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_declare('', 1)$$, 'SQLSTATE 22023'),
    ($$sem_declare(repeat('x', 1048576), 1)$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 0)$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', -1)$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_declare('bi-d', 1, NULL, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, NULL, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, NULL, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare('bi-d', 1, NULL, '-infinity')$$, 'SQLSTATE 22007'),
    ($$sem_declare('bi-d', 1, NULL, NULL)$$, ''),
    ($$sem_declare('bi-d0', 1, NULL, '0')$$, ''),
    ($$sem_declare_rate(NULL, 1, '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_declare_rate('bi-r', NULL, '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_declare_rate('bi-r', 1, NULL)$$, 'SQLSTATE 22004'),
    ($$sem_declare_rate('', 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate(repeat('x', 1048576), 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 0, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', -1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 2147483647, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_declare_rate('bi-r', 1, '1 minute', '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '1 minute', '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '1 minute', '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_rate('bi-r', 1, '1 minute', NULL)$$, ''),
    ($$sem_declare_bucket(NULL, 1, '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_declare_bucket('bi-b', NULL, '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_declare_bucket('bi-b', 1, NULL)$$, 'SQLSTATE 22004'),
    ($$sem_declare_bucket('', 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket(repeat('x', 1048576), 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 0, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', -1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 2147483647, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', 0)$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', -1)$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', NULL, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', NULL, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', NULL, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_declare_bucket('bi-b', 1, '1 minute', NULL, NULL)$$, ''),
    ($$sem_undeclare(NULL)$$, 'SQLSTATE 22004'),
    ($$sem_undeclare('')$$, 'SQLSTATE 22023'),
    ($$sem_undeclare(repeat('x', 1048576))$$, 'SQLSTATE 22023'),
    ($$sem_undeclare('bi-never-declared')$$, 'false'),
    ($$sem_undeclare('bi-d')$$, 'true');
INSERT INTO bad_input (call, expected)
SELECT format('%s(%s)', f, a), e
  FROM unnest(ARRAY['sem_grant', 'sem_revoke']) f,
       (VALUES (1, $$NULL, 'postgres'$$, 'SQLSTATE 22004'),
               (2, $$'bi-r', NULL$$, 'SQLSTATE 22004'),
               (3, $$'', 'postgres'$$, 'SQLSTATE 22023'),
               (4, $$repeat('x', 1048576), 'postgres'$$, 'SQLSTATE 22023'),
               (5, $$'bi-never-declared', 'postgres'$$, 'SQLSTATE 42704'),
               (6, $$'bi-r', 0::oid::regrole$$, 'SQLSTATE 42704'),
               (7, $$'bi-r', 4294967295::oid::regrole$$, 'SQLSTATE 42704')) v(o, a, e)
 ORDER BY f, o;
-- sem_revoke accepts the OID of a role that does not exist (a dropped role's, to remove it);
-- sem_grant refuses it above. OID 0 is no role's: 42704 for both.
UPDATE bad_input SET expected = ''
 WHERE call = $$sem_revoke('bi-r', 4294967295::oid::regrole)$$;
INSERT INTO bad_input (call, expected)
SELECT format('%s(%s)', f, a), e
  FROM unnest(ARRAY['sem_grant_public', 'sem_revoke_public']) f,
       (VALUES (1, $$NULL$$, 'SQLSTATE 22004'),
               (2, $$''$$, 'SQLSTATE 22023'),
               (3, $$repeat('x', 1048576)$$, 'SQLSTATE 22023'),
               (4, $$'bi-never-declared'$$, 'SQLSTATE 42704')) v(o, a, e)
 ORDER BY f, o;

------------------------------------------------------------------------------------------------
-- 7. Quotas
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected) VALUES
    ($$sem_set_quota(NULL, 1, 1)$$, 'SQLSTATE 22004'),
    ($$sem_set_quota('postgres', -1)$$, 'SQLSTATE 22023'),
    ($$sem_set_quota('postgres', 1, -1)$$, 'SQLSTATE 22023'),
    ($$sem_set_quota('postgres', -2147483648, NULL)$$, 'SQLSTATE 22023'),
    ($$sem_set_quota(0::oid::regrole, 1, 1)$$, 'SQLSTATE 42704'),
    ($$sem_set_quota('postgres', 0, 0)$$, ''),
    ($$sem_set_quota('postgres', 1000001, NULL)$$, 'SQLSTATE 22023'),
    ($$sem_set_quota('postgres', NULL, 1000001)$$, 'SQLSTATE 22023'),
    ($$sem_set_quota('postgres', 2147483647, 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_set_quota('postgres', 1000000, 1000000)$$, ''),
    ($$sem_set_quota('postgres', NULL, NULL)$$, '');

------------------------------------------------------------------------------------------------
-- 8. Rate limits, buckets, pauses, sem_stats_reset
------------------------------------------------------------------------------------------------
INSERT INTO bad_input (call, expected) VALUES
    ($$sem_rate(NULL, 1, '1 minute')$$, 'SQLSTATE 22004'),
    -- a NULL n or per is the declaration's: looked up after the transaction-block check, so
    -- in this file's transaction it is 25001 (outside one, undeclared: 22004)
    ($$sem_rate('bi-u', NULL, '1 minute')$$, 'SQLSTATE 25001'),
    ($$sem_rate('bi-u', 1, NULL)$$, 'SQLSTATE 25001'),
    ($$sem_rate('bi-u', 1, '1 minute', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_rate('bi-u', 1, '1 minute', 1, NULL)$$, 'SQLSTATE 22004'),
    ($$sem_rate('', 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_rate(repeat('x', 1048576), 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 0, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', -1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 2147483647, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_rate('bi-u', 1, '1 minute', 0)$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1 minute', -1)$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1 minute', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1 minute', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1 minute', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1 minute', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_rate('bi-u', 1, '1 minute')$$, 'SQLSTATE 25001'),
    ($$sem_bucket(NULL, 1, '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_bucket('bi-u', NULL, '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_bucket('bi-u', 1, NULL)$$, 'SQLSTATE 22004'),
    ($$sem_bucket('bi-u', 1, '1 minute', NULL)$$, 'SQLSTATE 22004'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, NULL)$$, 'SQLSTATE 22004'),
    ($$sem_bucket('', 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_bucket(repeat('x', 1048576), 1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 0, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', -1, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 2147483647, '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '0')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, 'infinity')$$, 'SQLSTATE 22007'),
    ($$sem_bucket('bi-u', 1, '1 minute', 0)$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', -1)$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, '-1 second')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, '1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, '-1000000 years')$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, '0', 0)$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, '0', -1)$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute', 1, '0', 2147483647)$$, 'SQLSTATE 22023'),
    ($$sem_bucket('bi-u', 1, '1 minute')$$, 'SQLSTATE 25001'),
    ($$sem_pause(NULL, now() + '1 minute')$$, 'SQLSTATE 22004'),
    ($$sem_pause('', now() + '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_pause(repeat('x', 1048576), now() + '1 minute')$$, 'SQLSTATE 22023'),
    ($$sem_pause('bi-p', 'infinity')$$, 'SQLSTATE 22023'),
    ($$sem_pause('bi-p', '-infinity')$$, 'SQLSTATE 22023'),
    ($$sem_pause('bi-p', now() + interval '100000 years')$$, 'SQLSTATE 22023'),
    -- a million years from now is no timestamptz: it fails before the call
    ($$sem_pause('bi-p', now() + interval '1000000 years')$$, 'SQLSTATE 22008'),
    ($$sem_pause('bi-p', now() - interval '1000 years')$$, 'NULL'),
    ($$sem_pause('bi-p', now() - interval '1 minute')$$, 'NULL'),
    ($$sem_pause('bi-p', NULL)$$, 'NULL'),
    ($$sem_pause('bi-p', now() + '1 minute') = now() + '1 minute'$$, 'true'),
    ($$sem_stats_reset('')$$, 'SQLSTATE 22023'),
    ($$sem_stats_reset(repeat('x', 1048576))$$, 'SQLSTATE 22023'),
    ($$sem_stats_reset('bi-never-counted')$$, '0'),
    ($$sem_stats_reset(NULL) >= 0$$, 'true');

-- Every function of the API is called above.
SELECT is((SELECT count(*) FROM pg_proc p
            JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
            JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
           WHERE p.pronamespace = 'public'::regnamespace
             AND NOT EXISTS (SELECT FROM bad_input b WHERE b.call ~ ('^' || p.proname || '\('))),
          0::bigint, 'every one of the 37 functions of the API is called with bad input');

SELECT CASE WHEN expected LIKE 'SQLSTATE %'
            THEN throws_ok('SELECT ' || call, substr(expected, 10, 5), NULL,
                           format('%s: %s', call, expected))
            ELSE is(pg_temp.answer(call), expected,
                    format('%s = %s', call, CASE expected WHEN '' THEN 'void' ELSE expected END))
       END
  FROM bad_input ORDER BY ord;

SELECT * FROM finish();
ROLLBACK;
