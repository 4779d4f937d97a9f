-- Claims that wait their turn; transaction and session claims. What one session can see; races
-- between sessions are in test/isolation/specs/sem_wait_*.spec.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
-- A first waiter checks for deadlocks after deadlock_timeout, and again as long before raising.
SET deadlock_timeout = '50ms';

-- sem_claim's fourth argument, by position or by name; 0 (the default) answers at once.
SELECT sem_claim('w-full', 1, '1 hour') AS first \gset
SELECT sem_claim('w-full', 1, '1 hour', '0') IS NULL AS refused_at_once,
       sem_claim('w-full', 1, wait => '0') IS NULL AS refused_by_name,
       sem_claim('w-full', 1, '1 hour', '30 milliseconds') IS NULL AS refused_after_waiting;
-- Nobody is left in line after a wait that timed out, inside a transaction block too.
BEGIN;
SELECT sem_claim('w-full', 1, wait => '20 milliseconds') IS NULL AS refused;
SELECT count(*) AS in_line FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 20561;
COMMIT;
SELECT count(*) AS waiters FROM sem_waiters;
SELECT sem_release(:first) AS released;
SELECT sem_claim('w-full', 1, wait => '1 second') IS NOT NULL AS granted_without_waiting;
-- Bad waits: an error, nothing changed.
SELECT try('SELECT sem_claim(''w-bad'', 1, ''1 hour'', NULL)');
SELECT try('SELECT sem_claim(''w-bad'', 1, ''1 hour'', ''-1 second'')');
SELECT try('SELECT sem_claim(''w-bad'', 1, ''1 hour'', ''1 day 1 second'')');
SELECT try('SELECT sem_claim_xact(''w-bad'', 1, NULL)');
SELECT try('SELECT sem_claim_session(''w-bad'', 1, ''-1 ms'')');
SELECT count(*) AS nothing_claimed FROM sem_holders WHERE name = 'w-bad';

-- Transaction claims: slots 0 .. n-1, NULL when full, all freed when the transaction ends.
BEGIN;
SELECT sem_claim_xact('x', 2) AS s0, sem_claim_xact('x', 2) AS s1,
       sem_claim_xact('x', 2) IS NULL AS full;
SELECT slot, kind, id IS NULL AS no_id, expires_at IS NULL AS no_lease, pid = pg_backend_pid() AS mine,
       open_since = now() AS open_since_transaction_start
  FROM sem_holders WHERE name = 'x' ORDER BY slot;
SELECT live, transaction_claims, session_claims, max_n FROM sem_summary WHERE name = 'x';
COMMIT;
SELECT count(*) AS after_commit FROM sem_holders WHERE name = 'x';
BEGIN;
SELECT sem_claim_xact('x', 1) AS slot;
ROLLBACK;
SELECT count(*) AS after_rollback FROM sem_holders WHERE name = 'x';
-- A claim in a savepoint that is rolled back is gone with it.
BEGIN;
SAVEPOINT sp;
SELECT sem_claim_xact('x', 1) AS in_savepoint;
ROLLBACK TO sp;
SELECT sem_claim_xact('x', 1) AS after_rollback_to;
COMMIT;
-- Outside a transaction block it protects nothing, and says so.
SELECT sem_claim_xact('x', 1) AS alone;

-- Session claims: kept across transactions until released or the session ends.
SELECT sem_claim_session('s', 2) AS s0, sem_claim_session('s', 2) AS s1,
       sem_claim_session('s', 2) IS NULL AS full;
BEGIN;
SELECT slot, kind FROM sem_holders WHERE name = 's' ORDER BY slot;
ROLLBACK;
SELECT count(*) AS kept_across_transactions FROM sem_holders WHERE name = 's';
SELECT sem_release_session('s', 1) AS released, sem_release_session('s', 1) AS twice,
       sem_release_session('s', 5) AS never_held, sem_release_session('nothing', 0) AS unknown;
SELECT sem_claim_session('s', 2) AS taken_again;
SELECT sem_release_session('s', 0) AND sem_release_session('s', 1) AS released_both;
SELECT try('SELECT sem_release_session(NULL, 0)');
SELECT try('SELECT sem_release_session(''s'', NULL)');
SELECT try('SELECT sem_release_session(''s'', -1)');
SELECT try('SELECT sem_release_session('''', 0)');
SELECT try('SELECT sem_claim_session(''s'', 0)');
SELECT try('SELECT sem_claim_xact(NULL, 1)');

-- A session claim is taken with its transaction: a rollback (of the transaction, or to a savepoint
-- before the claim), or an error that ends the claiming statement after the grant, gives it
-- back. Once committed it outlives later rollbacks.
BEGIN;
SELECT sem_claim_session('s', 3) AS taken;
ROLLBACK;
SELECT count(*) AS after_rollback FROM sem_holders WHERE name = 's';
BEGIN;
SELECT sem_claim_session('s', 3) AS kept;
SAVEPOINT before_second;
SELECT sem_claim_session('s', 3) AS rolled_back_to_savepoint;
ROLLBACK TO before_second;
SAVEPOINT before_third;
SELECT sem_claim_session('s', 3) AS released_savepoint;
RELEASE before_third;
COMMIT;
SELECT string_agg(slot::text, ',' ORDER BY slot) AS held FROM sem_holders WHERE name = 's';
-- A claim taken in a savepoint that was released belongs to the enclosing (sub)transaction from
-- then on, and goes when that rolls back: the whole transaction, an outer savepoint, or the
-- subtransaction of a DO block's EXCEPTION clause (which a caught error rolls back).
BEGIN;
SAVEPOINT a;
SELECT sem_claim_session('s-sp', 1) AS in_released_savepoint;
RELEASE a;
ROLLBACK;
BEGIN;
SAVEPOINT outer_sp;
SAVEPOINT inner_sp;
SELECT sem_claim_session('s-sp', 1) AS in_inner_savepoint;
RELEASE inner_sp;
ROLLBACK TO outer_sp;
COMMIT;
DO $$
BEGIN
    PERFORM sem_claim_session('s-sp', 1);
    RAISE division_by_zero;
EXCEPTION WHEN division_by_zero THEN
    NULL;
END $$;
SELECT count(*) AS none_kept FROM sem_holders WHERE name = 's-sp';
-- ... and stays once that commits: a DO block that ends well, in a released savepoint.
BEGIN;
SAVEPOINT a;
DO $$ BEGIN PERFORM sem_claim_session('s-sp', 1); END $$;
RELEASE a;
COMMIT;
SELECT sem_release_session('s-sp', 0) AS kept_and_released;
SELECT granted, 1 / (granted - granted) AS then_an_error FROM sem_claim_session('s', 3) AS granted;
BEGIN;
SELECT 1 / 0;
ROLLBACK;
SELECT string_agg(slot::text, ',' ORDER BY slot) AS still_held FROM sem_holders WHERE name = 's';
SELECT sem_release_session('s', 0) AND sem_release_session('s', 1) AS released_both;

-- Session claims are session-level advisory locks: pg_advisory_unlock_all() and DISCARD ALL (a
-- session pooler's reset query) free them too, and pgsem forgets them when that transaction ends.
SELECT sem_claim_session('s', 2) AS s0, sem_claim_session('s', 2) AS s1;
SELECT pg_advisory_unlock_all();
SELECT count(*) AS after_unlock_all FROM sem_holders WHERE name = 's';
SELECT sem_release_session('s', 0) AS was_still_held;
SELECT sem_claim_session('s', 1) AS s0;
DISCARD ALL;
SET deadlock_timeout = '50ms';  -- DISCARD ALL reset it
SELECT count(*) AS after_discard_all FROM sem_holders WHERE name = 's';
SELECT sem_claim_session('s', 1) AS s0_again, sem_release_session('s', 0) AS released;

-- All three kinds count against one n.
SELECT sem_claim('mixed', 3, '1 hour') AS lease \gset
SELECT sem_claim_session('mixed', 3) AS session_slot;
BEGIN;
SELECT sem_claim_xact('mixed', 3) AS xact_slot;
SELECT sem_claim_xact('mixed', 3) IS NULL AS xact_full,
       sem_claim_session('mixed', 3) IS NULL AS session_full,
       sem_claim('mixed', 3) IS NULL AS lease_full;
SELECT kind, slot FROM sem_holders WHERE name = 'mixed' ORDER BY slot;
SELECT live, transaction_claims, session_claims FROM sem_summary WHERE name = 'mixed';
COMMIT;
SELECT sem_claim('mixed', 3) IS NOT NULL AS lease_after_commit;
SELECT sem_release_session('mixed', 1) AS released_session;
SELECT sem_claim_xact('mixed', 3) AS xact_after_session_release;

-- Transaction and session claims write nothing: read-only transactions may take them; a lease,
-- a row, may not.
BEGIN READ ONLY;
SELECT sem_claim_xact('ro', 1) AS xact_slot, sem_claim_session('ro', 2) AS session_slot;
SELECT try('SELECT sem_claim(''ro'', 3)');
COMMIT;
SELECT sem_release_session('ro', 1) AS released;

-- Waiting for a slot only this backend holds can never end: a deadlock, found at once (two
-- checks deadlock_timeout apart) rather than at the end of the wait.
BEGIN;
SELECT sem_claim_xact('self', 1) AS mine;
SELECT try('SELECT sem_claim_xact(''self'', 1, ''1 minute'')');
ROLLBACK;
BEGIN;
SELECT sem_claim('self-lease', 1, '1 hour') IS NOT NULL AS mine;
SELECT try('SELECT sem_claim(''self-lease'', 1, ''1 hour'', ''1 minute'')');
ROLLBACK;
-- A committed lease ends on its own (release, or the lease runs out): waiting for it is no
-- deadlock, only a wait that may time out.
SELECT sem_claim('self-lease', 1, '1 hour') AS committed_lease \gset
SELECT sem_claim('self-lease', 1, '1 hour', '200 milliseconds') IS NULL AS timed_out;
-- lock_timeout and statement_timeout end a wait with their own errors, before its own end.
SET lock_timeout = '100ms';
SELECT try('SELECT sem_claim(''self-lease'', 1, ''1 hour'', ''1 minute'')');
SELECT try('SELECT sem_claim_session(''self-lease'', 1, ''1 minute'')');
RESET lock_timeout;
BEGIN;
SET LOCAL statement_timeout = '100ms';
SELECT sem_claim_xact('self-lease', 1, '1 minute');
ROLLBACK;
SELECT (SELECT count(*) FROM sem_waiters) AS waiters,
       (SELECT count(*) FROM sem_holders WHERE name = 'self-lease' AND kind <> 'lease') AS other_claims;
SELECT sem_release(:committed_lease) AS released;

-- Nothing left behind.
SELECT count(*) AS waiters FROM sem_waiters;
SELECT count(*) AS locks FROM pg_locks WHERE locktype = 'advisory' AND objsubid IN (20556, 20558, 20561, 20563);
SELECT count(sem_release(id)) >= 0 AS cleaned FROM sem_holders WHERE kind = 'lease';
RESET deadlock_timeout;
DROP FUNCTION try(text);
