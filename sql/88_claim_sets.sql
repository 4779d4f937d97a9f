-- One claim on several semaphores at once: all or none; a lease set is one claim id on every
-- semaphore, released, renewed and fenced by one call; transaction and session sets answer each
-- semaphore's lowest slot. Bad arrays are errors that change nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- Bad input: NULL arrays and elements (22004), no name, arrays of different lengths or more
-- than one dimension (2202E), a name twice, a bad name, n or permits (22023).
SELECT try($$SELECT sem_claim_all(NULL, ARRAY[1])$$) AS null_names,
       try($$SELECT sem_claim_all(ARRAY['s a'], NULL)$$) AS null_ns;
SELECT try($$SELECT sem_claim_all(ARRAY['s a', NULL], ARRAY[1, 1])$$) AS null_name,
       try($$SELECT sem_claim_all(ARRAY['s a', 's b'], ARRAY[1, NULL])$$) AS null_n,
       try($$SELECT sem_claim_all(ARRAY['s a'], ARRAY[1], permits => ARRAY[NULL]::int[])$$)
           AS null_permits;
SELECT try($$SELECT sem_claim_all(ARRAY[]::text[], ARRAY[]::int[])$$) AS empty,
       try($$SELECT sem_claim_all(ARRAY['s a', 's b'], ARRAY[1])$$) AS lengths,
       try($$SELECT sem_claim_all(ARRAY['s a'], ARRAY[1], permits => ARRAY[1, 1])$$)
           AS permits_length;
SELECT try($$SELECT sem_claim_all(ARRAY[['s a'], ['s b']], ARRAY[1, 1])$$) AS two_dimensions,
       try($$SELECT sem_claim_all(ARRAY['s a'], ARRAY[1], permits => '{}')$$) AS empty_permits;
SELECT try($$SELECT sem_claim_all(ARRAY['s a', 's b', 's a'], ARRAY[1, 1, 1])$$) AS repeated,
       try($$SELECT sem_claim_all(ARRAY['s a', ''], ARRAY[1, 1])$$) AS empty_name;
SELECT try($$SELECT sem_claim_all(ARRAY['s a', 's b'], ARRAY[1, 0])$$) AS bad_n,
       try($$SELECT sem_claim_all(ARRAY['s a', 's b'], ARRAY[1, 1], permits => ARRAY[1, 2])$$)
           AS permits_above_n;
SELECT try(format('SELECT sem_claim_all(%L::text[], %L::int[])',
                  (SELECT array_agg('s ' || i) FROM generate_series(1, 65) i),
                  (SELECT array_agg(1) FROM generate_series(1, 65) i))) AS too_many_names,
       try($$SELECT sem_claim_all(ARRAY['s a', 's b'], ARRAY[1000, 1000],
                                  permits => ARRAY[600, 600])$$) AS too_many_slots;
SELECT try($$SELECT sem_claim_all(ARRAY['s a'], ARRAY[1], '0 seconds')$$) AS bad_timeout,
       try($$SELECT sem_claim_all(ARRAY['s a'], ARRAY[1], request_key => '')$$) AS empty_key;
SELECT try($$SELECT sem_claim_xact_all(ARRAY['s a', 's a'], ARRAY[1, 1])$$) AS xact_repeated,
       try($$SELECT sem_claim_session_all(ARRAY['s a'], ARRAY[1], NULL)$$) AS session_null_wait;
SELECT count(*) AS nothing_held FROM sem_holders WHERE name LIKE 's %';

-- A lease set: one id on each semaphore, in the caller's order of names.
SELECT sem_claim_all(ARRAY['s provider', 's tenant'], ARRAY[3, 1], '1 hour') AS ids \gset
SELECT (:'ids'::bigint[])[1] = (:'ids'::bigint[])[2] AS one_id;
SELECT name, slot, kind FROM sem_holders WHERE id = (:'ids'::bigint[])[1] ORDER BY name;
-- All or none: the tenant is full, so a second set takes no provider slot either.
SELECT sem_claim_all(ARRAY['s tenant', 's provider'], ARRAY[1, 3], '1 hour') IS NULL
    AS refused_whole;
SELECT count(*) AS provider_still_one FROM sem_holders WHERE name = 's provider';
-- Renewed, fenced and released by one call, on every semaphore.
SELECT sem_renew((:'ids'::bigint[])[1], '2 hours') AS renewed;
SELECT count(DISTINCT expires_at) AS one_expiry FROM sem_holders
 WHERE id = (:'ids'::bigint[])[1];
BEGIN;
SELECT sem_fence((:'ids'::bigint[])[1]);
COMMIT;
SELECT sem_held((:'ids'::bigint[])[1]) AS held,
       sem_release((:'ids'::bigint[])[1]) AS released,
       sem_held((:'ids'::bigint[])[1]) AS held_after;
SELECT count(*) AS none_left FROM sem_holders WHERE name IN ('s provider', 's tenant');
SELECT name, status FROM sem_history WHERE id = (:'ids'::bigint[])[1] ORDER BY name;

-- Permits per semaphore: 2 of the pool and 1 of the tenant.
SELECT sem_claim_all(ARRAY['s pool', 's tenant'], ARRAY[4, 2], '1 hour',
                     permits => ARRAY[2, 1]) AS weighted \gset
SELECT name, count(*) AS slots FROM sem_holders WHERE id = (:'weighted'::bigint[])[1]
 GROUP BY name ORDER BY name;
SELECT sem_release((:'weighted'::bigint[])[1]) AS released;

-- A request key names the whole set: the retry gets the same claim; a key of another claim is
-- an error.
SELECT sem_claim_all(ARRAY['s a', 's b'], ARRAY[2, 2], '1 hour', request_key => 'set-1')
    AS keyed \gset
SELECT sem_claim_all(ARRAY['s b', 's a'], ARRAY[2, 2], '1 hour', request_key => 'set-1')
       = ARRAY[(:'keyed'::bigint[])[1], (:'keyed'::bigint[])[1]] AS same_claim,
       (SELECT count(*) FROM sem_holders WHERE name IN ('s a', 's b')) AS held;
SELECT try($$SELECT sem_claim_all(ARRAY['s a', 's c'], ARRAY[2, 2], '1 hour',
                                  request_key => 'set-1')$$) AS key_of_another_set;
-- A retry that names only some of a set's semaphores, or one of them alone (sem_claim), is not
-- the set's first attempt: the claim holds slots it did not ask for (55000).
SELECT sem_claim_all(ARRAY['s a', 's b', 's c'], ARRAY[2, 2, 2], '1 hour',
                     request_key => 'set-3') AS keyed3 \gset
SELECT try($$SELECT sem_claim_all(ARRAY['s c', 's a'], ARRAY[2, 2], '1 hour',
                                  request_key => 'set-3')$$) AS two_of_three;
SELECT try($$SELECT sem_claim('s a', 2, '1 hour', request_key => 'set-3')$$) AS one_of_three;
SELECT count(*) AS still_three FROM sem_holders WHERE id = (:'keyed3'::bigint[])[1];
SELECT sem_release((:'keyed3'::bigint[])[1]) AS released;
SELECT sem_release((:'keyed'::bigint[])[1]) AS released;

-- Transaction claims on several semaphores: each one's lowest slot, freed at the end.
BEGIN;
SELECT sem_claim_xact_all(ARRAY['s y', 's x'], ARRAY[2, 3], permits => ARRAY[1, 2]) AS slots;
SELECT name, slot, kind FROM sem_holders WHERE name IN ('s x', 's y') ORDER BY name, slot;
SELECT sem_claim_xact_all(ARRAY['s x', 's y'], ARRAY[3, 2], permits => ARRAY[2, 1]) IS NULL
    AS x_full;
COMMIT;
SELECT count(*) AS freed FROM sem_holders WHERE name IN ('s x', 's y');

-- Session claims: released per semaphore by sem_release_session, or with the session.
SELECT sem_claim_session_all(ARRAY['s p', 's q'], ARRAY[1, 1]) AS session_slots;
SELECT sem_claim_session_all(ARRAY['s q', 's r'], ARRAY[1, 1]) IS NULL AS q_taken_r_untouched,
       (SELECT count(*) FROM sem_holders WHERE name = 's r') AS r_held;
SELECT sem_release_session('s p', 0) AS p_released, sem_release_session('s q', 0) AS q_released;
SELECT count(*) AS none_left FROM sem_holders WHERE name LIKE 's %';
