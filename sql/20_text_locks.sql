-- Text-keyed advisory locks take exactly the lock pg_advisory_*(fnv1a_64(key)) takes.
-- try(sql) reports an error instead of failing (sql/helpers/try.sql; the path is relative to
-- the directory pg_regress runs in, the top of the tree).
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE FUNCTION held_advisory() RETURNS TABLE (key bigint, mode text, granted boolean)
LANGUAGE sql AS $$
    SELECT ((l.classid::bigint << 32) | l.objid::bigint), l.mode, l.granted
      FROM pg_locks l
     WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.objsubid = 1
     ORDER BY 1, 2
$$;

-- advisory_lock_text is pg_advisory_xact_lock(fnv1a_64(key)).
BEGIN;
SELECT advisory_lock_text('223 345');
SELECT key = fnv1a_64('223 345') AS same_key, mode FROM held_advisory();
-- Taking the bigint lock on the hash is a re-entry into the same lock: still one lock.
SELECT pg_advisory_xact_lock(3755351481708176604);
SELECT count(*) AS locks FROM held_advisory();
COMMIT;
SELECT count(*) AS locks_after_commit FROM held_advisory();

-- A key whose hash is >= 2^63 maps to the negative bigint.
BEGIN;
SELECT advisory_lock_text('');
SELECT key, key = fnv1a_64('') AS same_key FROM held_advisory();
ROLLBACK;

-- Shared transaction lock.
BEGIN;
SELECT advisory_lock_text_shared('k');
SELECT key = fnv1a_64('k') AS same_key, mode FROM held_advisory();
COMMIT;

-- Try variants succeed when nobody else holds the lock.
BEGIN;
SELECT advisory_try_lock_text('k') AS exclusive, advisory_try_lock_text_shared('k2') AS shared;
SELECT mode FROM held_advisory();
COMMIT;

-- Session locks outlive the transaction and need an unlock.
SELECT advisory_session_lock_text('s');
SELECT advisory_session_lock_text_shared('s');
SELECT advisory_session_try_lock_text('t') AS try_exclusive,
       advisory_session_try_lock_text_shared('t') AS try_shared;
SELECT key = fnv1a_64('s') AS is_s, mode FROM held_advisory() ORDER BY 1, 2;
SELECT advisory_session_unlock_text('s') AS unlocked, advisory_session_unlock_text_shared('s')
       AS unlocked_shared;
-- The session-level bigint unlock releases the text lock's twin, and vice versa.
SELECT pg_advisory_unlock(fnv1a_64('t')) AS bigint_unlock,
       advisory_session_unlock_text_shared('t') AS text_unlock;
SELECT count(*) AS locks_left FROM held_advisory();
-- Unlocking what is not held: false, with Postgres' own warning.
SELECT advisory_session_unlock_text('never locked');

-- Outside a transaction block a transaction-level lock protects nothing: a WARNING says so.
SELECT advisory_lock_text('alone');
SELECT advisory_try_lock_text('alone') AS got;
SELECT advisory_lock_text_shared('alone');
-- Session locks, and locks inside a block or a function, draw no warning.
SELECT advisory_session_lock_text('quiet');
SELECT advisory_session_unlock_text('quiet');
BEGIN;
SELECT advisory_lock_text('quiet');
COMMIT;
-- An implicit transaction block (several statements in one query string) is a block too.
SELECT advisory_lock_text('quiet') \; SELECT 1 AS second_statement;
CREATE FUNCTION reserve(k text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM advisory_lock_text(k);  -- protects the rest of this function's statement
    RETURN true;
END $$;
SELECT reserve('in a function');
DO $$ BEGIN PERFORM advisory_lock_text('in a DO block'); END $$;
-- PL/pgSQL evaluates IF conditions without a query of its own; in a DO block, a procedure or a
-- function the lock still protects what follows: no warning.
DO $$ BEGIN IF advisory_try_lock_text('if in a DO block') THEN NULL; END IF; END $$;
CREATE PROCEDURE lock_in_procedure() LANGUAGE plpgsql AS $$
BEGIN
    IF advisory_try_lock_text('if in a procedure') THEN NULL; END IF;
END $$;
CALL lock_in_procedure();
CREATE FUNCTION lock_if(k text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF advisory_try_lock_text(k) THEN RETURN true; END IF;
    RETURN false;
END $$;
SELECT lock_if('if in a function') AS locked;
-- EXECUTE of a prepared statement and EXPLAIN ANALYZE run the query as the statement itself:
-- outside a block, the lock protects nothing, and the WARNING says so.
PREPARE lock_alone AS SELECT advisory_lock_text('prepared');
EXECUTE lock_alone;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT advisory_lock_text('explained');
DEALLOCATE lock_alone;
DROP PROCEDURE lock_in_procedure();
DROP FUNCTION lock_if(text);

-- A null key is an error, never a silent "locked nothing".
SELECT try('SELECT advisory_lock_text(NULL)');
SELECT try('SELECT advisory_lock_text_shared(NULL)');
SELECT try('SELECT advisory_try_lock_text(NULL)');
SELECT try('SELECT advisory_try_lock_text_shared(NULL)');
SELECT try('SELECT advisory_session_lock_text(NULL)');
SELECT try('SELECT advisory_session_lock_text_shared(NULL)');
SELECT try('SELECT advisory_session_try_lock_text(NULL)');
SELECT try('SELECT advisory_session_try_lock_text_shared(NULL)');
SELECT try('SELECT advisory_session_unlock_text(NULL)');
SELECT try('SELECT advisory_session_unlock_text_shared(NULL)');
-- Empty, multi-byte and large keys are ordinary keys.
BEGIN;
SELECT advisory_lock_text(''), advisory_lock_text('ключ'), advisory_lock_text(repeat('k', 100000));
SELECT count(*) AS locks FROM held_advisory();
COMMIT;

DROP FUNCTION reserve(text);
DROP FUNCTION held_advisory();
DROP FUNCTION try(text);
