-- pgsem.max_held_slots: a session holds at most that many slots (32 by default) through
-- transaction and session claims, each a lock of the server's shared lock table. Before it, one
-- session could take thousands and leave every session of the server, pgsem's or not, "out of
-- shared memory" (53200). Past the bound a claim fails with 53400 and takes nothing; leases (rows)
-- do not count; a release, a commit or a rollback to a savepoint makes room again.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE ROLE regress_hs_app;
SELECT sem_held(0) AS loaded;  -- the setting exists once the library is loaded
SHOW pgsem.max_held_slots;

-- hs_fill takes session claims of distinct names, one after another, until refused or `upto`
-- are taken; its block's rollback then gives them all back.
CREATE FUNCTION hs_fill(prefix text, upto integer) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    taken integer := 0;
BEGIN
    LOOP
        PERFORM sem_claim_session(prefix || taken, 1);
        taken := taken + 1;
        IF taken = upto THEN RAISE EXCEPTION 'no bound' USING ERRCODE = 'P0001'; END IF;
    END LOOP;
EXCEPTION WHEN OTHERS THEN
    RETURN taken || ' taken, then ' || SQLSTATE;
END $$;

-- Refused at the 33rd, with 53400 (not 53200), and the refused claim holds nothing.
SELECT count(sem_claim_session('hs-s' || i, 1)) AS taken FROM generate_series(0, 31) i;
SELECT try($$SELECT sem_claim_session('hs-one-more', 1)$$) AS refused;
SELECT count(*) AS held, count(*) FILTER (WHERE name = 'hs-one-more') AS of_the_refused
  FROM sem_holders WHERE pid = pg_backend_pid();
SELECT count(*) AS slot_locks FROM pg_locks
 WHERE locktype = 'advisory' AND objsubid = 20556 AND pid = pg_backend_pid();

-- A lease is a row, not a lock: it does not count.
SELECT sem_release(sem_claim('hs-lease', 1)) AS lease_granted;
-- A release makes room for one more.
SELECT sem_release_session('hs-s0', 0) AS released,
       sem_claim_session('hs-after-release', 1) AS granted_after_release;
SELECT count(*) FILTER (WHERE sem_release_session('hs-s' || i, 0)) AS released
  FROM generate_series(1, 31) i;
SELECT sem_release_session('hs-after-release', 0) AS released;

-- Transaction and session claims count together, each permit a slot; a claim of several permits
-- or a set that would cross the bound is refused whole.
SELECT sem_claim_session('hs-k', 40, permits => 20) AS session_k;
BEGIN;
SELECT count(sem_claim_xact('hs-x' || i, 1)) AS xact_claims FROM generate_series(1, 10) i;
SELECT try($$SELECT sem_claim_xact('hs-k2', 10, permits => 3)$$) AS k_refused;
SELECT try($$SELECT sem_claim_all(ARRAY['hs-a', 'hs-b'], ARRAY[4, 4], '1 minute')$$)
       AS lease_set_granted;
SAVEPOINT before_pair;
SELECT sem_claim_xact('hs-k3', 10, permits => 2) AS last_two;
SELECT try($$SELECT sem_claim_xact('hs-k4', 10)$$) AS at_the_bound;
ROLLBACK TO before_pair;  -- gives the two back
SELECT sem_claim_xact('hs-k4', 10) AS after_savepoint_rollback;
COMMIT;
SELECT count(*) AS held_after_commit FROM sem_holders
 WHERE pid = pg_backend_pid() AND kind IS DISTINCT FROM 'lease';
SELECT sem_release_session('hs-k', 0) AS released;
SELECT sem_release(id) FROM sem_holders WHERE name IN ('hs-a', 'hs-b') GROUP BY id;

-- A request key's lock is held until the transaction ends: keys count too, in a transaction.
BEGIN;
SELECT count(sem_release(sem_claim('hs-keyed', 4, request_key => 'key ' || i))) AS keyed
  FROM generate_series(1, 32) i;
SELECT try($$SELECT sem_claim('hs-keyed', 4, request_key => 'key 33')$$) AS key_33_refused;
SELECT try($$SELECT sem_claim_xact('hs-x', 4)$$) AS then_a_slot_refused;
COMMIT;
SELECT sem_release(sem_claim('hs-keyed', 4, request_key => 'key 33')) AS next_transaction_keyed,
       sem_claim_session('hs-after-keys', 4) AS and_a_session_claim;
SELECT sem_release_session('hs-after-keys', 0) AS released;

-- Waiting first is no way around it: a claim that would cross the bound is refused before it
-- joins a line.
SELECT count(sem_claim_session('hs-w' || i, 1)) AS taken FROM generate_series(0, 31) i;
SELECT try($$SELECT sem_claim_session('hs-w0', 1, wait => '10 seconds')$$) AS refused_before_waiting;
SELECT count(*) FILTER (WHERE sem_release_session('hs-w' || i, 0)) AS released
  FROM generate_series(0, 31) i;

-- Only a superuser sets it (a role raising its own bound would bound nothing); -1: no bound (1000
-- taken here; the server's lock table is the limit then).
SET ROLE regress_hs_app;
SELECT try($$SET pgsem.max_held_slots = 1000$$) AS app_raises;
SELECT hs_fill('hs-app', 1000) AS app_fills;
RESET ROLE;
SET pgsem.max_held_slots = 2;
SELECT hs_fill('hs-two', 1000) AS two;
SET pgsem.max_held_slots = -1;
SELECT hs_fill('hs-unbounded', 1000) AS unbounded;
SELECT try($$SET pgsem.max_held_slots = -2$$) AS below_minus_one;
RESET pgsem.max_held_slots;

DROP FUNCTION hs_fill(text, integer);
DROP ROLE regress_hs_app;
