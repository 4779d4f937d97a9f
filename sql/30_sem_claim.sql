-- sem_claim: lowest free slot, NULL when full, bad input rejected with nothing changed.
-- try(sql) reports an error instead of failing (sql/helpers/try.sql; the path is relative to
-- the directory pg_regress runs in, the top of the tree).
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE FUNCTION claim_rows() RETURNS bigint LANGUAGE sql AS
    $$ SELECT count(*) FROM sem_history $$;

-- The seed article's throttle: at most 4 calls in flight. Five callers: four ids, one NULL.
SELECT sem_claim('svc', 4) AS c1 \gset
SELECT sem_claim('svc', 4) AS c2 \gset
SELECT sem_claim('svc', 4) AS c3 \gset
SELECT sem_claim('svc', 4) AS c4 \gset
SELECT sem_claim('svc', 4) IS NULL AS fifth_is_null;
SELECT slot, id - :c1 AS id_offset FROM sem_holders WHERE name = 'svc' ORDER BY slot;
-- Ids strictly increase in the order claims are granted.
SELECT :c1 < :c2 AND :c2 < :c3 AND :c3 < :c4 AS increasing;

-- A released slot is the next one taken.
SELECT sem_release(:c2) AS released;
SELECT sem_claim('svc', 4) AS c5 \gset
SELECT slot FROM sem_holders WHERE id = :c5;
SELECT :c5 > :c4 AS never_reused;

-- The default lease is 90 seconds of server time from the moment of the claim.
SELECT expires_at - claimed_at AS lease, claimed_at <= clock_timestamp() AS in_the_past
  FROM sem_holders WHERE id = :c1;
SELECT sem_claim('timed', 1, '2 minutes') AS t1 \gset
SELECT expires_at - claimed_at AS lease FROM sem_holders WHERE id = :t1;

-- Callers may pass different n for one name: a claim needs a free slot below its own n.
SELECT sem_claim('mixed', 4) IS NOT NULL AS interactive_1,
       sem_claim('mixed', 4) IS NOT NULL AS interactive_2;
SELECT sem_claim('mixed', 2) IS NULL AS background_refused;
SELECT sem_claim('mixed', 4) IS NOT NULL AS interactive_3;
SELECT slot FROM sem_holders WHERE name = 'mixed' ORDER BY slot;

-- Names are independent and compare bytewise.
SELECT sem_claim('Name', 1) IS NOT NULL AS upper, sem_claim('name', 1) IS NOT NULL AS lower,
       sem_claim('name ', 1) IS NOT NULL AS trailing_space, sem_claim('ключ', 1) IS NOT NULL AS multibyte;
SELECT sem_claim('name', 1) IS NULL AS same_name_full;

-- Several claims in one statement see each other.
SELECT count(id) AS granted, count(*) - count(id) AS refused
  FROM (SELECT sem_claim('batch', 3) AS id FROM generate_series(1, 5)) s;

-- Large n: random probing still gives distinct slots within [0, n).
SELECT count(id) AS granted FROM (SELECT sem_claim('big', 5000) AS id FROM generate_series(1, 200)) s;
SELECT count(*) AS holders, count(DISTINCT slot) AS slots,
       min(slot) >= 0 AND max(slot) < 5000 AS in_range
  FROM sem_holders WHERE name = 'big';
-- Filling a large semaphore ends in NULL, exactly at n.
SELECT count(id) AS granted, count(*) - count(id) AS refused
  FROM (SELECT sem_claim('fill', 100) AS id FROM generate_series(1, 130)) s;
SELECT count(*) AS holders, count(DISTINCT slot) AS distinct_slots FROM sem_holders WHERE name = 'fill';

-- Bad input: a clear error with a SQLSTATE, and nothing changed.
SELECT claim_rows() AS rows_before \gset
SELECT try($$SELECT sem_claim(NULL, 4)$$);
SELECT try($$SELECT sem_claim('', 4)$$);
SELECT try(format('SELECT sem_claim(%L, 4)', repeat('x', 257)));
SELECT try(format('SELECT sem_claim(%L, 4)', repeat('é', 129)));
SELECT try($$SELECT sem_claim('n', NULL)$$);
SELECT try($$SELECT sem_claim('n', 0)$$);
SELECT try($$SELECT sem_claim('n', -1)$$);
SELECT try($$SELECT sem_claim('n', 1000001)$$);
SELECT try($$SELECT sem_claim('n', 2147483647)$$);
SELECT try($$SELECT sem_claim('n', 1, NULL)$$);
SELECT try($$SELECT sem_claim('n', 1, '0')$$);
SELECT try($$SELECT sem_claim('n', 1, '-5 seconds')$$);
SELECT try($$SELECT sem_claim('n', 1, '0.5 milliseconds')$$);
SELECT try($$SELECT sem_claim('n', 1, '1 day 1 second')$$);
SELECT try($$SELECT sem_claim('n', 1, '1 month')$$);
SELECT try($$SELECT sem_claim('n', 1, '-178000000 years')$$);
SELECT claim_rows() = :rows_before AS nothing_changed;
-- The limits themselves are accepted.
SELECT sem_claim(repeat('x', 256), 1000000, '1 day') IS NOT NULL AS longest_name_largest_n_longest_lease,
       sem_claim('shortest', 1, '1 millisecond') IS NOT NULL AS shortest_lease;

-- Writing functions refuse to run in a read-only transaction.
BEGIN READ ONLY;
SELECT try($$SELECT sem_claim('ro', 1)$$);
COMMIT;

DROP FUNCTION claim_rows();
DROP FUNCTION try(text);
