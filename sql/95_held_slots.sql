-- pgsem.max_locks_per_session: a session holds at most that many entries of the server's shared
-- lock table through pgsem (64 by default, a session's share at Postgres' default
-- max_locks_per_transaction), counting what a claim holds at its peak: a line per name, a mutex
-- per slot while it looks, a transaction or session claim's slots and its name's holders lock,
-- a request key per name until the transaction ends. Before it, one session could take thousands
-- of session claims, and waiting sets of 64 names or looks for 1,000 permits in a few sessions
-- could leave every session of the server, pgsem's or not, "out of shared memory" (53200). Past
-- the bound a claim fails with 53400 before it takes or waits for anything.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE ROLE regress_hs_app;
SELECT sem_held(0) AS loaded;  -- the setting exists once the library is loaded
SHOW pgsem.max_locks_per_session;

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

-- A session claim holds 2 entries (its slot, its name's holders) and needs 2 more while it looks
-- (the line, the slot's mutex): 31 of distinct names fit in 64, the 32nd is refused with 53400
-- (not 53200), and holds nothing.
SELECT count(sem_claim_session('hs-s' || i, 1)) AS taken FROM generate_series(0, 30) i;
SELECT try($$SELECT sem_claim_session('hs-one-more', 1)$$) AS refused;
SELECT count(*) AS held, count(*) FILTER (WHERE name = 'hs-one-more') AS of_the_refused
  FROM sem_holders WHERE pid = pg_backend_pid();
SELECT count(*) AS pgsem_locks FROM pg_locks
 WHERE locktype = 'advisory' AND objsubid BETWEEN 20500 AND 20599 AND pid = pg_backend_pid();
-- A lease holds no lock once made, and needs 2 while it looks: it fits.
SELECT sem_release(sem_claim('hs-lease', 1)) AS lease_granted;
-- A release makes room again.
SELECT sem_release_session('hs-s0', 0) AS released,
       sem_claim_session('hs-after-release', 1) AS granted_after_release;
SELECT count(*) FILTER (WHERE sem_release_session('hs-s' || i, 0)) AS released
  FROM generate_series(1, 30) i;
SELECT sem_release_session('hs-after-release', 0) AS released;

-- Permits, sets, keys and transaction claims, with a bound of 20 (the comments count entries).
SET pgsem.max_locks_per_session = 20;
SELECT sem_claim_session('hs-k', 40, permits => 4) AS session_k;   -- needs 10, then holds 5
SELECT try($$SELECT sem_claim_session('hs-k7', 40, permits => 7)$$) AS k7_refused;  -- 5 + 16
SELECT try($$SELECT sem_claim_all(ARRAY['hs-a', 'hs-b', 'hs-c'], ARRAY[8, 8, 8], '1 minute',
                                  permits => ARRAY[5, 5, 5])$$) AS lease_set_3x5_refused;  -- 5 + 18
SELECT sem_release(ids[1]) AS lease_set_2x4_granted  -- 5 + 10
  FROM (SELECT sem_claim_all(ARRAY['hs-a', 'hs-b'], ARRAY[8, 8], '1 minute',
                             permits => ARRAY[4, 4]) AS ids) s;
BEGIN;
SELECT sem_claim_xact('hs-x', 10, permits => 2) AS xact_2;          -- 5 + 6, then holds 8
SELECT sem_release(sem_claim('hs-keyed', 4, request_key => 'key 1')) AS keyed;  -- 8 + 3, holds 9
SAVEPOINT before_more;
SELECT sem_claim_xact('hs-y', 10, permits => 2) AS xact_2_more;     -- 9 + 6, holds 12
SELECT try($$SELECT sem_claim_xact('hs-z', 10, permits => 4)$$) AS xact_4_refused;  -- 12 + 10
ROLLBACK TO before_more;  -- gives hs-y back: holds 9
SELECT sem_claim_xact('hs-z', 10, permits => 4) AS after_savepoint_rollback;  -- 9 + 10
COMMIT;
SELECT count(*) AS held_after_commit FROM sem_holders  -- hs-k's 4 slots
 WHERE pid = pg_backend_pid() AND kind IS DISTINCT FROM 'lease';

-- Waiting is no way around it: a claim that would cross the bound is refused before it joins a
-- line (a waiter holds its lines for the whole wait).
SELECT try($$SELECT sem_claim_all(ARRAY['hs-a', 'hs-b', 'hs-c'], ARRAY[8, 8, 8], '1 minute',
                                  wait => '10 seconds', permits => ARRAY[5, 5, 5])$$)
       AS refused_before_waiting;
SELECT sem_release_session('hs-k', 0) AS released;

-- After a lowering, a look also picks a slot (under its mutex) for each holder above the new n:
-- 6 leases held on a name declared with n = 10, lowered to 2, make a claim's look want 1 + 4
-- slots. With a bound of 5 the look is refused (53400) before it picks them, not answered NULL.
SELECT sem_declare('hs-lowered', 10);
SELECT count(sem_claim('hs-lowered')) AS held FROM generate_series(1, 6);
SELECT sem_declare('hs-lowered', 2);
SET pgsem.max_locks_per_session = 5;
SELECT try($$SELECT sem_claim('hs-lowered')$$) AS spares_refused;
SELECT try($$SELECT sem_claim_all(ARRAY['hs-lowered'], ARRAY[2], '1 minute')$$)
       AS set_spares_refused;
SET pgsem.max_locks_per_session = 6;
SELECT sem_claim('hs-lowered') IS NULL AS room_for_the_look_but_no_slot;
RESET pgsem.max_locks_per_session;
SELECT count(sem_release(id)) AS released FROM (
    SELECT DISTINCT id FROM sem_holders WHERE name = 'hs-lowered') h;
SELECT sem_undeclare('hs-lowered');

-- Only a superuser sets it (a role raising its own bound would bound nothing); -1: no bound (1000
-- taken here; the server's lock table is the limit then).
RESET pgsem.max_locks_per_session;
SET ROLE regress_hs_app;
SELECT try($$SET pgsem.max_locks_per_session = 1000$$) AS app_raises;
SELECT hs_fill('hs-app', 1000) AS app_fills;
RESET ROLE;
SET pgsem.max_locks_per_session = 8;  -- 2 per claim held, 4 while one is made: 3 fit
SELECT hs_fill('hs-eight', 1000) AS eight;
SET pgsem.max_locks_per_session = -1;
SELECT hs_fill('hs-unbounded', 1000) AS unbounded;
SELECT try($$SET pgsem.max_locks_per_session = -2$$) AS below_minus_one;
RESET pgsem.max_locks_per_session;

DROP FUNCTION hs_fill(text, integer);
DROP ROLE regress_hs_app;
