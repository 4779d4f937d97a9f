-- Retry-safe claims: a lease claimed with a request key that names a live claim of the same role
-- on the same semaphore answers with that claim instead of taking more slots; once the claim has
-- ended (released, or its lease ran out) the key makes a new one. Bad keys are errors that change
-- nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- Bad keys: empty, or longer than 256 bytes (22023). NULL is no key at all.
SELECT try($$SELECT sem_claim('k bad', 2, request_key => '')$$) AS empty_key,
       try(format('SELECT sem_claim(%L, 2, request_key => %L)', 'k bad', repeat('k', 257)))
           AS too_long;
SELECT count(*) AS nothing_held FROM sem_holders WHERE name = 'k bad';
SELECT sem_claim('k bad', 2, request_key => repeat('k', 256)) IS NOT NULL AS longest_key_taken,
       sem_claim('k bad', 2, request_key => NULL) IS NOT NULL AS null_is_no_key,
       sem_claim('k bad', 2, request_key => NULL) IS NULL AS full;

-- The same key again: the same claim, one slot.
SELECT sem_claim('k one', 3, '1 hour', request_key => 'job-17') AS first \gset
SELECT sem_claim('k one', 3, '1 hour', request_key => 'job-17') = :first AS same_claim,
       (SELECT count(*) FROM sem_holders WHERE name = 'k one') AS held;
-- Even when the semaphore is full: the retry holds its slot already.
SELECT sem_claim('k one', 3, '1 hour') IS NOT NULL AS second,
       sem_claim('k one', 3, '1 hour') IS NOT NULL AS third,
       sem_claim('k one', 3, '1 hour', request_key => 'job-17') = :first AS same_claim_when_full,
       sem_claim('k one', 3, '1 hour', request_key => 'job-18') IS NULL AS other_key_refused;
-- Keys are per name: the same key on another semaphore is another claim.
SELECT sem_claim('k two', 3, '1 hour', request_key => 'job-17') <> :first AS other_name_other_claim;
-- Once released, the key makes a new claim.
SELECT sem_release(:first) AS released;
SELECT sem_claim('k one', 3, '1 hour', request_key => 'job-17') AS again \gset
SELECT :again <> :first AS new_claim, sem_held(:again) AS held;

-- A claim of several permits: the retry gets the whole claim, no more slots.
SELECT sem_claim('k big', 5, '1 hour', permits => 3, request_key => 'big') AS big \gset
SELECT sem_claim('k big', 5, '1 hour', permits => 3, request_key => 'big') = :big AS same_big,
       (SELECT count(*) FROM sem_holders WHERE name = 'k big') AS held;

-- A lease that ran out frees its key: the retry is a new claim, the old one recorded as timed
-- out.
SELECT sem_claim('k short', 2, '1 millisecond', request_key => 'brief') AS brief \gset
SELECT pg_sleep(0.05);
SELECT sem_claim('k short', 2, '1 hour', request_key => 'brief') AS after \gset
SELECT :after <> :brief AS new_claim,
       (SELECT status FROM sem_history WHERE id = :brief) AS old_status,
       (SELECT count(*) FROM sem_holders WHERE name = 'k short') AS held;

-- Inside one transaction the key names the transaction's own claim; a rollback takes it away.
BEGIN;
SELECT sem_claim('k xact', 2, '1 hour', request_key => 'in-xact') AS in_xact \gset
SELECT sem_claim('k xact', 2, '1 hour', request_key => 'in-xact') = :in_xact AS same_in_xact;
ROLLBACK;
SELECT count(*) AS nothing_after_rollback FROM sem_holders WHERE name = 'k xact';

-- Keys are per role: another role's claim with the same key is its own.
CREATE ROLE regress_keys_a;
CREATE ROLE regress_keys_b;
SET ROLE regress_keys_a;
SELECT sem_claim('k roles', 4, '1 hour', request_key => 'shared') AS by_a \gset
SELECT sem_claim('k roles', 4, '1 hour', request_key => 'shared') = :by_a AS a_same;
SET ROLE regress_keys_b;
SELECT sem_claim('k roles', 4, '1 hour', request_key => 'shared') <> :by_a AS b_other;
RESET ROLE;
SELECT count(*) AS two_held FROM sem_holders WHERE name = 'k roles';

-- The key is stored on one row of its claim (the lowest slot's), where the unique index over
-- live keyed rows keeps one live claim per name, role and key.
SELECT count(*) FILTER (WHERE request_key IS NOT NULL) AS keyed_rows, count(*) AS rows
  FROM pgsem.claims WHERE id = :big;
SELECT try(format($$INSERT INTO pgsem.claims (id, name, slot, slots, claimed_at, expires_at, lease,
                                            holder_pid, holder_role, application_name,
                                            permits, request_key)
                   SELECT id + 1000000, name, slot + 4, slots, claimed_at, expires_at, lease,
                          holder_pid, holder_role, application_name, permits, request_key
                     FROM pgsem.claims WHERE id = %s AND request_key IS NOT NULL$$, :big))
       AS second_live_row_with_key;

-- A retry repeats its first attempt: under the key of a live claim, another n or another number
-- of permits is another request, refused (22023) rather than answered with slots it did not ask
-- for; nothing changes. Another timeout gets the claim, which keeps its lease.
SELECT sem_claim('k args', 4, '1 hour', request_key => 'args') AS args_claim \gset
SELECT try($$SELECT sem_claim('k args', 4, '1 hour', permits => 2, request_key => 'args')$$)
           AS more_permits;
SELECT try($$SELECT sem_claim('k args', 2, '1 hour', request_key => 'args')$$) AS other_n;
SELECT sem_claim('k args', 4, '1 minute', request_key => 'args') = :args_claim AS same_claim,
       (SELECT count(*) FROM sem_holders WHERE name = 'k args') AS held;

SELECT sem_release(id) FROM (SELECT DISTINCT id FROM sem_holders WHERE name LIKE 'k %') h;
DROP ROLE regress_keys_a;
DROP ROLE regress_keys_b;
