-- Sliding-window rate limits: sem_rate(name, n, per) grants at most n permits in any window of
-- length per; a grant holds its permits for exactly per, and nothing ends it before. Bad input
-- is an error that changes nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- NULLs (22004), then values out of range (22023). A NULL n or per is the declaration's, so an
-- undeclared name without them is refused once the name's declaration is looked up: after the
-- transaction-block check (try() runs its statement in a subtransaction), so called directly.
SELECT sem_rate('r bad', NULL, '1 minute') AS null_n;
SELECT sem_rate('r bad', 2, NULL) AS null_per;
SELECT try($$SELECT sem_rate(NULL, 2, '1 minute')$$) AS null_name,
       try($$SELECT sem_rate('r bad', 2, '1 minute', NULL)$$) AS null_permits,
       try($$SELECT sem_rate('r bad', 2, '1 minute', 1, NULL)$$) AS null_wait;
SELECT try($$SELECT sem_rate('', 2, '1 minute')$$) AS empty_name,
       try(format('SELECT sem_rate(%L, 2, %L)', repeat('r', 257), '1 minute')) AS long_name,
       try($$SELECT sem_rate('r bad', 0, '1 minute')$$) AS zero_n,
       try($$SELECT sem_rate('r bad', 1000001, '1 minute')$$) AS huge_n;
SELECT try($$SELECT sem_rate('r bad', 2, '0')$$) AS zero_per,
       try($$SELECT sem_rate('r bad', 2, '-1 second')$$) AS negative_per,
       try($$SELECT sem_rate('r bad', 2, '1 day 1 second')$$) AS per_over_a_day,
       try($$SELECT sem_rate('r bad', 2, '1 minute', 0)$$) AS zero_permits,
       try($$SELECT sem_rate('r bad', 2, '1 minute', 3)$$) AS permits_over_n,
       try($$SELECT sem_rate('r bad', 2, '1 minute', 1, '-1 second')$$) AS negative_wait;
SELECT count(*) AS nothing_granted FROM sem_holders WHERE name = 'r bad';

-- Not inside a transaction block or subtransaction (25001): the caller could act on a grant and
-- then roll it back, and the permit would be granted again. Nor in a string of statements, which
-- is one (implicit). (try() runs its statement in a subtransaction.)
SELECT try($$SELECT sem_rate('r tx', 1, '1 hour')$$) AS in_a_subtransaction;
BEGIN;
SELECT sem_rate('r tx', 1, '1 hour') AS in_a_block;
ROLLBACK;
SELECT sem_rate('r tx', 1, '1 hour') AS alone \; SELECT 1 AS then_another;
-- Nor in a DO block or a procedure (CALL), at any depth of the code they call, which may ROLLBACK
-- after the grant answered; sem_bucket the same.
DO $$ BEGIN RAISE NOTICE 'granted %', sem_rate('r tx', 1, '1 hour'); ROLLBACK; END $$;
CREATE FUNCTION r_take() RETURNS boolean LANGUAGE plpgsql
    AS $$ BEGIN RETURN sem_bucket('r tx bucket', 1, '1 hour'); END $$;
CREATE PROCEDURE r_proc() LANGUAGE plpgsql AS $$ BEGIN PERFORM r_take(); END $$;
CALL r_proc();
SELECT count(*) AS nothing_granted FROM sem_holders WHERE name = 'r tx';
SELECT count(*) AS no_bucket FROM pgsem.buckets WHERE name = 'r tx bucket';
-- A function called by a statement of its own is not a procedure: it grants.
SELECT r_take() AS from_a_function;
DROP PROCEDURE r_proc();
DROP FUNCTION r_take();

-- n grants in a window, then refusals; each grant is held for per.
SELECT sem_rate('r one', 3, '1 hour') AS first,
       sem_rate('r one', 3, '1 hour') AS second,
       sem_rate('r one', 3, '1 hour') AS third,
       sem_rate('r one', 3, '1 hour') AS fourth_refused;
SELECT count(*) AS held, bool_and(expires_at - claimed_at = '1 hour') AS held_for_per
  FROM sem_holders WHERE name = 'r one';

-- Weighted: all of a grant's permits or none.
SELECT sem_rate('r weighted', 5, '1 hour', permits => 3) AS three,
       sem_rate('r weighted', 5, '1 hour', permits => 3) AS three_more_refused,
       sem_rate('r weighted', 5, '1 hour', permits => 2) AS two_fit;
SELECT count(*) AS slots_held, count(DISTINCT id) AS grants
  FROM sem_holders WHERE name = 'r weighted';

-- Nothing ends a grant early: release, renewal and fence are refused (55000), the grant stays.
SELECT min(id) AS grant_id FROM sem_holders WHERE name = 'r one' \gset
SELECT try(format('SELECT sem_release(%s)', :grant_id)) AS release,
       try(format('SELECT sem_renew(%s, %L)', :grant_id, '2 hours')) AS renew;
BEGIN;
SELECT try(format('SELECT sem_fence(%s)', :grant_id)) AS fence;
COMMIT;
SELECT sem_held(:grant_id) AS still_held,
       (SELECT count(*) FROM sem_holders WHERE name = 'r one') AS held;

-- The window slides: once per has passed since a grant, its permit is granted again, and the
-- grant it replaces is recorded as timed out.
SELECT sem_rate('r short', 2, '100 milliseconds') AS a,
       sem_rate('r short', 2, '100 milliseconds') AS b,
       sem_rate('r short', 2, '100 milliseconds') AS c_refused;
SELECT pg_sleep(0.15);
SELECT sem_rate('r short', 2, '100 milliseconds') AS after_the_window;
SELECT count(*) FILTER (WHERE status = 'timed out') AS passed,
       count(*) FILTER (WHERE status = 'held') AS held
  FROM sem_history WHERE name = 'r short';

-- A caller that waits is granted at the window's edge: one per after the grant whose permit it
-- takes, not before.
SELECT sem_rate('r wait', 1, '300 milliseconds') AS first;
SELECT sem_rate('r wait', 1, '300 milliseconds', wait => '5 seconds') AS waited;
SELECT max(claimed_at) - min(claimed_at) >= '300 milliseconds' AS not_before_the_edge,
       count(*) AS grants
  FROM sem_history WHERE name = 'r wait';

-- A caller that waits less than the window has left is refused when its wait runs out.
SELECT sem_rate('r wait', 1, '300 milliseconds', wait => '10 milliseconds') AS refused;

-- A window of many slots is used up in order, so that a call finds room while any is left: the
-- 20,000th of 20,000 grants in one window is made, and the next call is refused. (Random slots,
-- as a lease takes, would leave the last ones scattered where a few probes miss them.)
SELECT count(*) FILTER (WHERE granted) AS granted, count(*) FILTER (WHERE NOT granted) AS refused,
       bool_and(granted) FILTER (WHERE i <= 20000) AS every_call_until_full
  FROM (SELECT i, sem_rate('r many', 20000, '1 hour') AS granted
          FROM generate_series(1, 20001) i) g;

-- A large window finds room where grants' windows have passed, whatever n is:
-- 200 per window, two grants of 100, a third refused; once the window has passed, one grant of
-- 150 reuses 150 of those slots. (A grant holds each of its slots' mutexes while it looks: 151
-- entries of the lock table, above a session's default pgsem.max_locks_per_session.)
SET pgsem.max_locks_per_session = 200;
SELECT count(*) FILTER (WHERE granted) AS granted, count(*) FILTER (WHERE NOT granted) AS refused
  FROM (SELECT sem_rate('r big', 200, '300 milliseconds', permits => 100) AS granted
          FROM generate_series(1, 3)) g;
SELECT pg_sleep(0.35);
SELECT sem_rate('r big', 200, '300 milliseconds', permits => 150) AS reuses_passed_slots;
RESET pgsem.max_locks_per_session;
SELECT count(*) AS held, max(slot) < 200 AS below_n FROM sem_holders WHERE name = 'r big';
