-- pgTAP: what the functions do, seen from one session: FNV-1a values, the advisory lock each
-- text-lock function takes (as pg_locks shows it), and a semaphore's life cycle.
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(49);

------------------------------------------------------------------------------------------------
-- fnv1a_64 (8)
------------------------------------------------------------------------------------------------
SELECT is(fnv1a_64('223 345'), 3755351481708176604::bigint,
          'fnv1a_64(''223 345'') is the seed article''s value');
-- Published FNV-1a 64 test vectors, as two's-complement bigints.
SELECT results_eq(
    $$SELECT to_hex(fnv1a_64(k)) FROM (VALUES (1, ''), (2, 'a'), (3, 'foobar')) v(i, k) ORDER BY i$$,
    $$VALUES ('cbf29ce484222325'), ('af63dc4c8601ec8c'), ('85944171f73967e8')$$,
    'published FNV-1a 64 vectors ('''', a, foobar)');
SELECT is(fnv1a_64(''), -3750763034362895579::bigint,
          'fnv1a_64('''') is the offset basis 0xcbf29ce484222325 as a negative bigint');
SELECT is(fnv1a_64(''::bytea), fnv1a_64(''::text), 'empty bytea and empty text hash alike');
SELECT is(fnv1a_64('é'), fnv1a_64('\xc3a9'::bytea), 'text hashes its UTF-8 bytes');
SELECT is(fnv1a_64('ключ'), fnv1a_64(convert_to('ключ', 'UTF8')), 'Cyrillic: text = its UTF-8 bytes');
SELECT cmp_ok((SELECT count(*) FROM generate_series(1, 1000) g WHERE fnv1a_64(md5(g::text)) < 0),
              '>', 300::bigint, 'hashes of 2^63 and above come out negative (not as errors)');
SELECT is(fnv1a_64(NULL::bytea), NULL, 'fnv1a_64(NULL::bytea) is NULL');

------------------------------------------------------------------------------------------------
-- Each text-lock function takes pg_advisory_*'s lock on fnv1a_64(key) (15)
------------------------------------------------------------------------------------------------
-- The advisory lock this backend holds on one bigint key: pg_locks splits it into two oids.
CREATE FUNCTION pg_temp.my_advisory_lock(key bigint) RETURNS TABLE (mode text, granted boolean)
LANGUAGE sql AS $$
    SELECT l.mode, l.granted FROM pg_locks l
     WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.objsubid = 1
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.classid = ((key >> 32) & 4294967295)::oid
       AND l.objid = (key & 4294967295)::oid
$$;

SELECT lives_ok($$SELECT advisory_lock_text('pgtap-x')$$, 'advisory_lock_text() takes its lock');
SELECT results_eq($$SELECT * FROM pg_temp.my_advisory_lock(fnv1a_64('pgtap-x'))$$,
                  $$VALUES ('ExclusiveLock', true)$$,
                  'advisory_lock_text(k) holds ExclusiveLock on the bigint key fnv1a_64(k)');
SELECT lives_ok($$SELECT advisory_lock_text_shared('pgtap-s')$$,
                'advisory_lock_text_shared() takes its lock');
SELECT results_eq($$SELECT * FROM pg_temp.my_advisory_lock(fnv1a_64('pgtap-s'))$$,
                  $$VALUES ('ShareLock', true)$$,
                  'advisory_lock_text_shared(k) holds ShareLock on fnv1a_64(k)');
SELECT is(advisory_try_lock_text('pgtap-tx'), true, 'advisory_try_lock_text() of a free key: true');
SELECT results_eq($$SELECT * FROM pg_temp.my_advisory_lock(fnv1a_64('pgtap-tx'))$$,
                  $$VALUES ('ExclusiveLock', true)$$,
                  'advisory_try_lock_text(k) holds ExclusiveLock on fnv1a_64(k)');
SELECT is(advisory_try_lock_text_shared('pgtap-ts'), true,
          'advisory_try_lock_text_shared() of a free key: true');
SELECT results_eq($$SELECT * FROM pg_temp.my_advisory_lock(fnv1a_64('pgtap-ts'))$$,
                  $$VALUES ('ShareLock', true)$$,
                  'advisory_try_lock_text_shared(k) holds ShareLock on fnv1a_64(k)');
-- The same lock as the bigint function: pg_advisory_xact_lock(fnv1a_64(k)) adds no new row.
SELECT lives_ok($$SELECT pg_advisory_xact_lock(fnv1a_64('pgtap-x'))$$,
                'pg_advisory_xact_lock(fnv1a_64(k)) re-enters the same lock');
SELECT is((SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()),
          4::bigint, 'four advisory locks held, one per key');

-- Session locks outlive the transaction; unlock gives them back, a second unlock says false.
SET LOCAL client_min_messages = error;  -- unlocking a lock not held warns, like Postgres'
SELECT lives_ok($$SELECT advisory_session_lock_text('pgtap-sess')$$,
                'advisory_session_lock_text() takes its lock');
SELECT is(advisory_session_try_lock_text_shared('pgtap-sess-sh'), true,
          'advisory_session_try_lock_text_shared() of a free key: true');
SELECT results_eq(
    $$VALUES (advisory_session_unlock_text('pgtap-sess'), advisory_session_unlock_text('pgtap-sess'),
              advisory_session_unlock_text_shared('pgtap-sess-sh'),
              advisory_session_unlock_text_shared('pgtap-sess-sh'))$$,
    $$VALUES (true, false, true, false)$$,
    'session unlock: true once, then false (exclusive and shared)');
SELECT is(advisory_session_try_lock_text('pgtap-sess'), true,
          'advisory_session_try_lock_text() of a free key: true');
SELECT is(advisory_session_unlock_text('pgtap-sess'), true, 'and it unlocks');
RESET client_min_messages;

------------------------------------------------------------------------------------------------
-- A semaphore's life cycle (22)
------------------------------------------------------------------------------------------------
SELECT count(*) AS history_before FROM sem_history \gset
SELECT sem_claim('pgtap-sem', 2) AS c1 \gset
SELECT sem_claim('pgtap-sem', 2) AS c2 \gset
SELECT is(sem_claim('pgtap-sem', 2), NULL, 'a third claim of a 2-slot semaphore is NULL');
SELECT ok(:c1 < :c2, 'claim ids increase');
SELECT results_eq(
    format('SELECT id, slot FROM sem_holders WHERE name = %L ORDER BY slot', 'pgtap-sem'),
    format('VALUES (%s::bigint, 0), (%s::bigint, 1)', :c1, :c2),
    'sem_holders: one row per held slot, lowest slots first');
SELECT results_eq($$SELECT live, expired_unreaped, max_n FROM sem_summary WHERE name = 'pgtap-sem'$$,
                  $$VALUES (2::bigint, 0::bigint, 2)$$, 'sem_summary: 2 live of n = 2');
SELECT is((SELECT expires_at - claimed_at FROM sem_holders WHERE id = :c1), interval '90 seconds',
          'the default lease is 90 seconds');
SELECT is((SELECT role::text FROM sem_holders WHERE id = :c1), current_user::text,
          'the claim records the claiming role');
SELECT is((SELECT pid FROM sem_holders WHERE id = :c1), pg_backend_pid(),
          'the claim records the claiming backend');
SELECT is(sem_held(:c1), true, 'sem_held(live claim) is true');
SELECT is(sem_release(:c1), true, 'sem_release(live claim) is true');
SELECT is(sem_release(:c1), false, 'sem_release(released claim) is false');
SELECT is(sem_held(:c1), false, 'sem_held(released claim) is false');
SELECT is(sem_renew(:c1), false, 'sem_renew(released claim) is false');
SELECT is(sem_release(-1), false, 'sem_release(unknown id) is false');
SELECT is(sem_held(-1), false, 'sem_held(unknown id) is false');
SELECT is(sem_renew(:c2, '5 minutes'), true, 'sem_renew(live claim, 5 minutes) is true');
SELECT cmp_ok((SELECT expires_at FROM sem_holders WHERE id = :c2),
              '>', clock_timestamp() + interval '4 minutes', 'the renewed lease runs 5 minutes from now');
SELECT is(sem_renew(:c2), true, 'sem_renew(live claim) with its own lease is true');
SELECT results_eq(
    format('SELECT id, status FROM sem_history WHERE id IN (%s, %s) ORDER BY id', :c1, :c2),
    format('VALUES (%s::bigint, %L), (%s::bigint, %L)', :c1, 'released', :c2, 'held'),
    'sem_history: the released claim and the held one');
SELECT is((SELECT count(*) FROM sem_history), (:history_before + 2)::bigint,
          'only the two granted claims were recorded (refused and failed claims add no row)');

-- A lease that runs out frees its slot for the next claimer, and the history says why.
SELECT sem_claim('pgtap-short', 1, '1 millisecond') AS s1 \gset
SELECT pg_sleep(0.05) IS NULL AS slept \gset
SELECT is(sem_held(:s1), false, 'a claim whose lease ran out is not held');
SELECT isnt(sem_claim('pgtap-short', 1), NULL, 'its slot is free for the next claimer');
SELECT is((SELECT status FROM sem_history WHERE id = :s1), 'timed out',
          'sem_history: the expired claim timed out');

------------------------------------------------------------------------------------------------
-- History pruning (4)
------------------------------------------------------------------------------------------------
SELECT is(sem_prune_history(0), 0::bigint, 'sem_prune_history(0) deletes nothing');
-- With no retention, ended claims (released or timed out) go; held ones stay.
SET LOCAL pgsem.history_retention = 0;
SELECT cmp_ok(sem_prune_history(1000), '>=', 2::bigint,
              'with pgsem.history_retention = 0, sem_prune_history() deletes the ended claims');
SELECT is((SELECT count(*) FROM sem_history WHERE id IN (:c1, :s1)), 0::bigint,
          'the released and the timed-out claim are gone from sem_history');
SELECT is((SELECT status FROM sem_history WHERE id = :c2), 'held', 'the held claim stays');

SELECT * FROM finish();
ROLLBACK;
