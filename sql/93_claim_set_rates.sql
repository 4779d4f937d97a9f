-- Rate limits inside a set: sem_claim_all(..., pers) makes each member with a window in pers a
-- sliding-window rate limit of ns[i] per pers[i], granted as sem_rate grants it, in the set's one
-- all-or-nothing look. "At most 4 in flight and at most 100 per minute" is one statement. Bad
-- input is an error that changes nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- Bad input: pers of another length or shape (2202E); a window not in (0, 1 day], as sem_rate's
-- per (22023); a rate member's permits above its n (22023); a name that is both a semaphore and a
-- rate limit of the set is a name twice (22023).
SELECT try($$SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                                  pers => ARRAY['1 minute']::interval[])$$) AS pers_length,
       try($$SELECT sem_claim_all(ARRAY['sr a'], ARRAY[4], pers => '{}')$$) AS empty_pers,
       try($$SELECT sem_claim_all(ARRAY['sr a'], ARRAY[4],
                                  pers => ARRAY[['1 minute']]::interval[])$$) AS two_dimensions;
SELECT try($$SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                                  pers => ARRAY[NULL, '0']::interval[])$$) AS zero_per,
       try($$SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                                  pers => ARRAY['-1 second', NULL]::interval[])$$) AS negative_per,
       try($$SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                                  pers => ARRAY[NULL, '1 day 1 second']::interval[])$$)
           AS per_over_a_day;
SELECT try($$SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2], permits => ARRAY[1, 3],
                                  pers => ARRAY[NULL, '1 minute']::interval[])$$)
           AS rate_permits_over_n,
       try($$SELECT sem_claim_all(ARRAY['sr a', 'sr a'], ARRAY[4, 100],
                                  pers => ARRAY[NULL, '1 minute']::interval[])$$)
           AS semaphore_and_rate_limit;
SELECT count(*) AS nothing_held FROM pgsem.claims WHERE name LIKE 'sr %';

-- A set with a rate member is one grant: like sem_rate, it is refused inside a transaction
-- block, a subtransaction (try() runs its statement in one) and a string of statements (25001).
-- A set whose pers are all NULL has no rate member and runs anywhere.
SELECT try($$SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                                  pers => ARRAY[NULL, '1 minute']::interval[])$$)
           AS in_a_subtransaction;
BEGIN;
SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                     pers => ARRAY[NULL, '1 minute']::interval[]) AS in_a_block;
ROLLBACK;
SELECT sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                     pers => ARRAY[NULL, '1 minute']::interval[]) AS alone \; SELECT 1 AS then;
BEGIN;
SELECT array_length(sem_claim_all(ARRAY['sr a', 'sr b'], ARRAY[4, 2],
                                  pers => ARRAY[NULL, NULL]::interval[]), 1) AS no_rate_member;
ROLLBACK;
SELECT count(*) AS nothing_held FROM pgsem.claims WHERE name LIKE 'sr %';

-- At most 4 in flight and at most 3 per hour, one claim: one id on both; the semaphore's row is
-- a lease of the timeout, the rate limit's a grant of its window, granted at the same moment.
SELECT sem_claim_all(ARRAY['sr pool', 'sr api'], ARRAY[4, 3], '10 minutes',
                     pers => ARRAY[NULL, '1 hour']::interval[]) AS ids \gset
SELECT (:'ids'::bigint[])[1] = (:'ids'::bigint[])[2] AS one_id;
SELECT name, slot, coalesce(rate, false) AS rate, lease, expires_at - claimed_at AS held_for
  FROM pgsem.claims WHERE id = (:'ids'::bigint[])[1] ORDER BY name;
SELECT count(DISTINCT claimed_at) AS one_grant_time FROM pgsem.claims
 WHERE id = (:'ids'::bigint[])[1];

-- Release, renewal, fence and sem_held act on the semaphore alone: the rate limit's grant keeps
-- counting until its window has passed it (released early, it would let more through).
SELECT sem_renew((:'ids'::bigint[])[1], '20 minutes') AS renewed;
SELECT name, expires_at - claimed_at >= '20 minutes' AS renewed,
       expires_at - claimed_at = '1 hour' AS its_window
  FROM pgsem.claims WHERE id = (:'ids'::bigint[])[1] ORDER BY name;
BEGIN;
SELECT sem_fence((:'ids'::bigint[])[1]) AS fenced;
COMMIT;
SELECT sem_held((:'ids'::bigint[])[1]) AS held,
       sem_release((:'ids'::bigint[])[1]) AS released,
       sem_held((:'ids'::bigint[])[1]) AS held_after,
       sem_release((:'ids'::bigint[])[1]) AS released_twice;
SELECT name, ended_at IS NULL AS unended FROM pgsem.claims
 WHERE id = (:'ids'::bigint[])[1] ORDER BY name;
-- The window still holds that grant: two more sets fill it, and a third set, or sem_rate, finds
-- no room.
SELECT sem_claim_all(ARRAY['sr pool', 'sr api'], ARRAY[4, 3], '10 minutes',
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NOT NULL AS second,
       sem_claim_all(ARRAY['sr pool', 'sr api'], ARRAY[4, 3], '10 minutes',
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NOT NULL AS third;
SELECT sem_rate('sr api', 3, '1 hour') AS sem_rate_refused;

-- All or nothing, one way: the rate limit has no room, so the set takes no slot of the pool.
SELECT sem_claim_all(ARRAY['sr pool', 'sr api'], ARRAY[4, 3], '10 minutes',
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NULL AS refused_whole;
SELECT count(*) AS pool_slots_held FROM sem_holders WHERE name = 'sr pool';
-- And the other: the semaphore is full, so the set takes no permit of the rate limit.
SELECT sem_claim('sr full', 1, '1 hour') IS NOT NULL AS full;
SELECT sem_claim_all(ARRAY['sr full', 'sr other api'], ARRAY[1, 5], '10 minutes',
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NULL AS refused_whole;
SELECT count(*) AS no_grant_taken FROM pgsem.claims WHERE name = 'sr other api';
-- Both again with the member that has no room after the other in the set's order (names
-- bytewise), which the look reaches second.
SELECT sem_rate('sr aon rate', 1, '1 hour') AS window_filled;
SELECT sem_claim_all(ARRAY['sr aon rate', 'sr aon pool'], ARRAY[1, 4], '10 minutes',
                     pers => ARRAY['1 hour', NULL]::interval[]) IS NULL AS refused_whole;
SELECT count(*) AS pool_slots_held FROM pgsem.claims WHERE name = 'sr aon pool';
SELECT sem_claim('sr aon full', 1, '1 hour') IS NOT NULL AS full;
SELECT sem_claim_all(ARRAY['sr aon full', 'sr aon api'], ARRAY[1, 5], '10 minutes',
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NULL AS refused_whole;
SELECT count(*) AS no_grant_taken FROM pgsem.claims WHERE name = 'sr aon api';

-- A set of rate limits alone (100 per minute and 1000 per hour, say): its id answers, but
-- nothing ends its grants early (55000, as for sem_rate's), and sem_held is true for its window.
SELECT sem_claim_all(ARRAY['sr minute', 'sr hour'], ARRAY[2, 3],
                     pers => ARRAY['1 minute', '1 hour']::interval[]) AS rates \gset
SELECT try(format('SELECT sem_release(%s)', (:'rates'::bigint[])[1])) AS release,
       try(format('SELECT sem_renew(%s)', (:'rates'::bigint[])[1])) AS renew,
       sem_held((:'rates'::bigint[])[1]) AS held;
SELECT name, lease FROM pgsem.claims WHERE id = (:'rates'::bigint[])[1] ORDER BY name;

-- Weighted: permits[i] of a rate member, all or none.
SELECT sem_claim_all(ARRAY['sr w pool', 'sr w api'], ARRAY[4, 5], '10 minutes',
                     permits => ARRAY[1, 3], pers => ARRAY[NULL, '1 hour']::interval[])
           IS NOT NULL AS three,
       sem_claim_all(ARRAY['sr w pool', 'sr w api'], ARRAY[4, 5], '10 minutes',
                     permits => ARRAY[1, 3], pers => ARRAY[NULL, '1 hour']::interval[])
           IS NULL AS three_more_refused;
SELECT name, count(*) AS rows FROM pgsem.claims WHERE name LIKE 'sr w %' AND ended_at IS NULL
 GROUP BY name ORDER BY name;

-- The window slides: once per has passed since a grant, its permit is granted again.
SELECT sem_claim_all(ARRAY['sr s pool', 'sr s api'], ARRAY[9, 2], '1 minute',
                     pers => ARRAY[NULL, '500 milliseconds']::interval[]) IS NOT NULL AS a,
       sem_claim_all(ARRAY['sr s pool', 'sr s api'], ARRAY[9, 2], '1 minute',
                     pers => ARRAY[NULL, '500 milliseconds']::interval[]) IS NOT NULL AS b,
       sem_claim_all(ARRAY['sr s pool', 'sr s api'], ARRAY[9, 2], '1 minute',
                     pers => ARRAY[NULL, '500 milliseconds']::interval[]) IS NULL AS c_refused;
SELECT pg_sleep(0.55);
SELECT sem_claim_all(ARRAY['sr s pool', 'sr s api'], ARRAY[9, 2], '1 minute',
                     pers => ARRAY[NULL, '500 milliseconds']::interval[]) IS NOT NULL
           AS after_the_window;

-- A set that waits is granted at the window's edge, one per after the grant whose permit it
-- takes, not before.
SELECT sem_claim_all(ARRAY['sr e pool', 'sr e api'], ARRAY[4, 1], '1 minute',
                     pers => ARRAY[NULL, '300 milliseconds']::interval[]) IS NOT NULL AS first;
SELECT sem_claim_all(ARRAY['sr e pool', 'sr e api'], ARRAY[4, 1], '1 minute', '5 seconds',
                     pers => ARRAY[NULL, '300 milliseconds']::interval[]) IS NOT NULL AS waited;
SELECT max(claimed_at) - min(claimed_at) >= '300 milliseconds' AS not_before_the_edge,
       count(*) AS grants
  FROM pgsem.claims WHERE name = 'sr e api';

-- A request key: the retry gets the same claim and takes no second permit of the rate limit. The
-- key goes on the semaphore's row, not the rate grant's, so that it ends with the claim.
SELECT sem_claim_all(ARRAY['sr k pool', 'sr k api'], ARRAY[4, 5], '1 hour',
                     request_key => 'set-rate-1', pers => ARRAY[NULL, '1 hour']::interval[])
    AS keyed \gset
SELECT sem_claim_all(ARRAY['sr k api', 'sr k pool'], ARRAY[5, 4], '1 hour',
                     request_key => 'set-rate-1', pers => ARRAY['1 hour', NULL]::interval[])
       = :'keyed'::bigint[] AS same_claim;
SELECT count(*) AS one_grant FROM pgsem.claims WHERE name = 'sr k api';
SELECT name, request_key FROM pgsem.claims WHERE id = (:'keyed'::bigint[])[1] ORDER BY name;
-- A retry that asks for another window, a rate limit as a semaphore, drops the rate limit or
-- names one more, is not the first attempt: 22023 or 55000, and nothing taken. (Those with a
-- rate member are not run through try(), whose subtransaction is refused first: their errors
-- are shown with the claim id masked.)
\set VERBOSITY sqlstate
SELECT sem_claim_all(ARRAY['sr k pool', 'sr k api'], ARRAY[4, 5], '1 hour',
                     request_key => 'set-rate-1', pers => ARRAY[NULL, '1 minute']::interval[])
    AS other_window;
SELECT regexp_replace(:'LAST_ERROR_MESSAGE', 'claim \d+', 'claim <id>') AS other_window;
SELECT sem_claim_all(ARRAY['sr k pool', 'sr k api', 'sr k more'], ARRAY[4, 5, 5], '1 hour',
                     request_key => 'set-rate-1',
                     pers => ARRAY[NULL, '1 hour', '1 hour']::interval[]) AS another_rate_limit;
SELECT regexp_replace(:'LAST_ERROR_MESSAGE', 'claim \d+', 'claim <id>') AS another_rate_limit;
SELECT sem_claim_all(ARRAY['sr k pool', 'sr k api'], ARRAY[4, 5], '1 hour',
                     request_key => 'set-rate-1', permits => ARRAY[1, 2],
                     pers => ARRAY[NULL, '1 hour']::interval[]) AS other_permits;
SELECT regexp_replace(:'LAST_ERROR_MESSAGE', 'claim \d+', 'claim <id>') AS other_permits;
\set VERBOSITY default
SELECT try($$SELECT sem_claim_all(ARRAY['sr k pool', 'sr k api'], ARRAY[4, 5], '1 hour',
                                  request_key => 'set-rate-1')$$) AS rate_as_semaphore,
       try($$SELECT sem_claim_all(ARRAY['sr k pool'], ARRAY[4], '1 hour',
                                  request_key => 'set-rate-1')$$) AS without_the_rate;
SELECT count(*) AS still_one_grant FROM pgsem.claims WHERE name = 'sr k api';
-- Released, the claim has ended and the key makes a new one; the first grant still counts.
SELECT sem_release((:'keyed'::bigint[])[1]) AS released;
SELECT sem_claim_all(ARRAY['sr k pool', 'sr k api'], ARRAY[4, 5], '1 hour',
                     request_key => 'set-rate-1', pers => ARRAY[NULL, '1 hour']::interval[])
       <> :'keyed'::bigint[] AS a_new_claim;
SELECT count(*) AS two_grants FROM pgsem.claims WHERE name = 'sr k api' AND ended_at IS NULL;
-- A set of rate limits alone keeps its key on the grants of its longest window, for that long.
SELECT sem_claim_all(ARRAY['sr k minute', 'sr k hour'], ARRAY[5, 5],
                     request_key => 'set-rate-2',
                     pers => ARRAY['1 minute', '1 hour']::interval[]) AS rates_keyed \gset
SELECT sem_claim_all(ARRAY['sr k minute', 'sr k hour'], ARRAY[5, 5],
                     request_key => 'set-rate-2',
                     pers => ARRAY['1 minute', '1 hour']::interval[])
       = :'rates_keyed'::bigint[] AS same_claim;
SELECT count(*) AS one_grant_each FROM pgsem.claims WHERE name IN ('sr k minute', 'sr k hour');
SELECT name, request_key FROM pgsem.claims WHERE id = (:'rates_keyed'::bigint[])[1] ORDER BY name;
-- A lease (sem_claim) is not the retry of a rate limit's grant.
SELECT try($$SELECT sem_claim('sr k hour', 5, '1 hour', request_key => 'set-rate-2')$$)
           AS lease_retry;

-- Declarations apply to a rate member as to sem_rate: its n (ns NULL), the right to claim, the
-- maximum lease bounding its window. (Not through try(): its subtransaction is refused first.)
SELECT sem_declare('sr declared', 1, max_lease => '1 hour');
SELECT sem_claim_all(ARRAY['sr d pool', 'sr declared'], ARRAY[4, NULL],
                     pers => ARRAY[NULL, '2 hours']::interval[]) AS above_max_lease;
SELECT sem_claim_all(ARRAY['sr d pool', 'sr declared'], ARRAY[4, NULL],
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NOT NULL AS declared_n,
       sem_claim_all(ARRAY['sr d pool', 'sr declared'], ARRAY[4, NULL],
                     pers => ARRAY[NULL, '1 hour']::interval[]) IS NULL AS window_full;
SELECT slots AS n, rate FROM pgsem.claims WHERE name = 'sr declared';
CREATE ROLE regress_set_rates;
SET ROLE regress_set_rates;
SELECT sem_claim_all(ARRAY['sr d pool', 'sr declared'], ARRAY[4, NULL],
                     pers => ARRAY[NULL, '1 hour']::interval[]) AS no_right;
RESET ROLE;
SELECT sem_undeclare('sr declared');
DROP ROLE regress_set_rates;
