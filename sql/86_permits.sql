-- Claims of several permits: a claim of k holds k slots of the semaphore at once, all or none;
-- release, renewal and fence act on every one of them. Bad permits are errors that change nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- Bad permits, for each kind of claim: NULL (22004), below 1 or above n or the limit (22023).
SELECT try($$SELECT sem_claim('p bad', 4, '1 hour', '0', NULL)$$) AS null_permits,
       try($$SELECT sem_claim('p bad', 4, permits => 0)$$) AS zero,
       try($$SELECT sem_claim('p bad', 4, permits => -1)$$) AS negative;
SELECT try($$SELECT sem_claim('p bad', 4, permits => 5)$$) AS above_n,
       try($$SELECT sem_claim('p bad', 2000, permits => 1001)$$) AS above_limit;
SELECT try($$SELECT sem_claim_xact('p bad', 4, '0', NULL)$$) AS xact_null,
       try($$SELECT sem_claim_xact('p bad', 4, permits => 5)$$) AS xact_above_n;
SELECT try($$SELECT sem_claim_session('p bad', 4, permits => 0)$$) AS session_zero,
       try($$SELECT sem_claim_session('p bad', 2000, permits => 1001)$$) AS session_above_limit;
SELECT count(*) AS nothing_held FROM sem_holders WHERE name = 'p bad';
SELECT count(*) AS nothing_recorded FROM sem_history WHERE name = 'p bad';

-- A lease of 3 of 5: three rows, one id, the lowest free slots.
SELECT sem_claim('p lease', 5, '1 hour', permits => 3) AS big \gset
SELECT slot, id = :big AS same_id, kind FROM sem_holders WHERE name = 'p lease' ORDER BY slot;
-- 2 slots are left: a claim of 3 is refused, taking none of them; a claim of 2 gets both.
SELECT sem_claim('p lease', 5, '1 hour', permits => 3) IS NULL AS three_refused;
SELECT count(*) AS still_three_held FROM sem_holders WHERE name = 'p lease';
SELECT sem_claim('p lease', 5, '1 hour', permits => 2) AS pair \gset
SELECT string_agg(slot::text, ',' ORDER BY slot) AS pair_slots FROM sem_holders WHERE id = :pair;
SELECT sem_claim('p lease', 5) IS NULL AS full;
-- Renewal, fence and held act on the claim as a whole.
SELECT sem_renew(:big, '2 hours') AS renewed;
SELECT count(DISTINCT expires_at) AS one_expiry,
       bool_and(expires_at - claimed_at > '1 hour 59 minutes') AS all_renewed
  FROM sem_holders WHERE id = :big;
BEGIN;
SELECT sem_fence(:big);
COMMIT;
SELECT sem_held(:big) AS held;
-- A release frees all three slots at once.
SELECT sem_release(:big) AS released, sem_release(:big) AS released_twice, sem_held(:big) AS held;
SELECT string_agg(status || ' ' || permits, ',' ORDER BY slot) AS history FROM sem_history WHERE id = :big;
SELECT sem_claim('p lease', 5, '1 hour', permits => 3) IS NOT NULL AS three_again;
SELECT count(*) AS held_now FROM sem_holders WHERE name = 'p lease';

-- Transaction claims: the claim is named by its lowest slot; its slots go at the end of the
-- transaction.
BEGIN;
SELECT sem_claim_xact('p xact', 3, permits => 2) AS lowest;
SELECT slot, kind FROM sem_holders WHERE name = 'p xact' ORDER BY slot;
SELECT sem_claim_xact('p xact', 3, permits => 2) IS NULL AS two_more_refused;
SELECT sem_claim_xact('p xact', 3) AS last_slot;
COMMIT;
SELECT count(*) AS none_after_commit FROM sem_holders WHERE name = 'p xact';

-- Session claims: any slot of the claim gives back all of them.
SELECT sem_claim_session('p session', 4, permits => 3) AS lowest;
SELECT string_agg(slot::text, ',' ORDER BY slot) AS slots FROM sem_holders
 WHERE name = 'p session';
SELECT sem_release_session('p session', 1) AS released_by_its_second_slot;
SELECT count(*) AS none_left FROM sem_holders WHERE name = 'p session';
SELECT sem_release_session('p session', 0) AS released_again;

-- Kinds count against one n: leases of 2, then a transaction claim of 2 on a semaphore of 3.
SELECT sem_claim('p mixed', 3, permits => 2) AS mixed \gset
BEGIN;
SELECT sem_claim_xact('p mixed', 3, permits => 2) IS NULL AS refused;
SELECT sem_claim_xact('p mixed', 3) AS the_third;
ROLLBACK;
SELECT sem_release(:mixed) AS released;

-- A rolled-back claim of several permits leaves nothing.
BEGIN;
SELECT sem_claim('p rollback', 4, permits => 4) IS NOT NULL AS claimed;
ROLLBACK;
SELECT count(*) AS nothing_held FROM sem_holders WHERE name = 'p rollback';
SELECT sem_claim('p rollback', 4, permits => 4) IS NOT NULL AS all_four_free;

SELECT sem_release(id) FROM (SELECT DISTINCT id FROM sem_holders WHERE name LIKE 'p %'
                              AND id IS NOT NULL) h;
DROP FUNCTION try(text);
