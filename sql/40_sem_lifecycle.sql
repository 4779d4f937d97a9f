-- sem_release, sem_renew, sem_held, sem_fence; expiry; claims in transactions.
-- try(sql) reports an error instead of failing (sql/helpers/try.sql; the path is relative to
-- the directory pg_regress runs in, the top of the tree).
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- Release: true once, then false; unknown ids are false; NULL gives NULL.
SELECT sem_claim('life', 2) AS a \gset
SELECT sem_held(:a) AS held;
SELECT sem_release(:a) AS first, sem_release(:a) AS second;
SELECT sem_held(:a) AS held_after_release;
SELECT sem_release(0) AS zero, sem_release(-1) AS negative, sem_release(9223372036854775807) AS unknown;
SELECT sem_release(NULL) IS NULL AS null_release, sem_held(NULL) IS NULL AS null_held;
SELECT status, ended_at >= claimed_at AS ended_after_claim FROM sem_history WHERE id = :a;

-- Renew extends from now, by the claim's own lease or a new one.
SELECT sem_claim('life', 2, '10 seconds') AS b \gset
SELECT sem_renew(:b) AS renewed;
SELECT expires_at - clock_timestamp() BETWEEN '9 seconds' AND '10 seconds' AS own_lease
  FROM sem_holders WHERE id = :b;
SELECT sem_renew(:b, '1 hour') AS renewed_longer;
SELECT expires_at - clock_timestamp() BETWEEN '59 minutes' AND '1 hour' AS new_lease
  FROM sem_holders WHERE id = :b;
SELECT sem_renew(NULL) IS NULL AS null_id, sem_renew(NULL, '1 hour') IS NULL AS null_id_2;
SELECT try(format('SELECT sem_renew(%s, %L)', :b, '0'));
SELECT try(format('SELECT sem_renew(%s, %L)', :b, '2 days'));
SELECT sem_release(:b) AS released, sem_renew(:b) AS renew_after_release;

-- Expiry: a lapsed lease frees the slot for the next claimer and is recorded as timed out.
SELECT sem_claim('lapse', 1, '20 milliseconds') AS c \gset
SELECT sem_claim('lapse', 1) IS NULL AS full_while_held;
SELECT pg_sleep(0.1);
SELECT sem_held(:c) AS held_after_lapse;
SELECT status, ended_at = expires_at AS ended_when_lease_ran_out FROM sem_history WHERE id = :c;
SELECT name, live, expired_unreaped FROM sem_summary WHERE name = 'lapse';
SELECT sem_claim('lapse', 1) AS d \gset
SELECT :d > :c AS newer_id;
SELECT id = :d AS new_holder FROM sem_holders WHERE name = 'lapse';
SELECT status FROM sem_history WHERE id IN (:c, :d) ORDER BY id;
-- A late release or renew of a lapsed claim is false.
SELECT sem_release(:c) AS late_release, sem_renew(:c) AS late_renew;
-- Releasing a lapsed claim nobody reused records its timeout too.
SELECT sem_claim('lapse2', 1, '20 milliseconds') AS e \gset
SELECT pg_sleep(0.1);
SELECT sem_release(:e) AS late_release;
SELECT status FROM sem_history WHERE id = :e;
SELECT count(*) AS unreaped FROM sem_summary WHERE name = 'lapse2';

-- A claim inside a transaction block counts at once and vanishes on rollback.
BEGIN;
SELECT sem_claim('tx', 1) IS NOT NULL AS claimed;
SELECT sem_claim('tx', 1) IS NULL AS full_inside;
ROLLBACK;
SELECT sem_claim('tx', 1) IS NOT NULL AS free_after_rollback;
BEGIN;
SAVEPOINT s;
SELECT sem_claim('tx2', 1) IS NOT NULL AS claimed_in_savepoint;
ROLLBACK TO SAVEPOINT s;
SELECT sem_claim('tx2', 1) IS NOT NULL AS free_after_savepoint_rollback;
COMMIT;

-- Every isolation level.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sem_claim('iso', 2) IS NOT NULL AS rr_1, sem_claim('iso', 2) IS NOT NULL AS rr_2,
       sem_claim('iso', 2) IS NULL AS rr_full;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT sem_claim('iso-s', 1) AS s1 \gset
SELECT sem_claim('iso-s', 1) IS NULL AS ser_full, sem_release(:s1) AS ser_release,
       sem_claim('iso-s', 1) IS NOT NULL AS ser_reclaim;
COMMIT;

-- Fence: an error unless the claim is live.
SELECT sem_claim('fence', 1) AS f \gset
BEGIN;
SELECT sem_fence(:f);
SELECT sem_held(:f) AS held_while_fenced;
COMMIT;
SELECT sem_release(:f) AS released;
BEGIN;
SELECT try(format('SELECT sem_fence(%s)', :f));
SELECT try('SELECT sem_fence(9223372036854775807)');
SELECT try('SELECT sem_fence(NULL)');
COMMIT;
SELECT sem_claim('fence', 1, '20 milliseconds') AS g \gset
SELECT pg_sleep(0.1);
BEGIN;
SELECT try(format('SELECT sem_fence(%s)', :g)) AS lapsed;
COMMIT;
-- Outside a transaction block a fence protects nothing: a WARNING says so.
SELECT sem_claim('fence2', 1) AS h \gset
SELECT sem_fence(:h);
-- So does EXECUTE of a prepared statement that fences: it runs as the statement itself.
PREPARE fence_it(bigint) AS SELECT sem_fence($1);
EXECUTE fence_it(:h);
DEALLOCATE fence_it;


-- Claims and renewals commit durably whatever the session asks for, and a transaction that only
-- releases commits without waiting for its flush (test/tap/002 crashes a server to show both);
-- none of it changes the session's own setting.
SET synchronous_commit = off;
SELECT sem_claim('async', 1) AS r \gset
SELECT sem_renew(:r) AS renewed, sem_release(:r) AS released;
SHOW synchronous_commit;
RESET synchronous_commit;
SELECT sem_release(sem_claim('async', 1)) AS released;
SHOW synchronous_commit;
DROP FUNCTION try(text);
