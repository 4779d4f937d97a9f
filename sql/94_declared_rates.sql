-- Declared rate limits: sem_declare_rate (a sliding window) and sem_declare_bucket (a token
-- bucket) declare a name's rule once; callers name only the limit (sem_rate(name),
-- sem_bucket(name), a member of sem_claim_all), and the name is granted under that rule alone and
-- one way alone. Privileges apply as to declared semaphores. Bad input is an error that changes
-- nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- Bad input to the declaring functions: NULLs (22004), n, per and burst out of range, a bucket
-- that would take more than a day to refill, a negative maximum wait (22023). Nothing declared.
SELECT try($$SELECT sem_declare_rate(NULL, 3, '1 second')$$) AS null_name,
       try($$SELECT sem_declare_rate('dr w', NULL, '1 second')$$) AS null_n,
       try($$SELECT sem_declare_rate('dr w', 3, NULL)$$) AS null_per;
SELECT try($$SELECT sem_declare_rate('', 3, '1 second')$$) AS empty_name,
       try($$SELECT sem_declare_rate('dr w', 0, '1 second')$$) AS zero_n,
       try($$SELECT sem_declare_rate('dr w', 1000001, '1 second')$$) AS huge_n;
SELECT try($$SELECT sem_declare_rate('dr w', 3, '0')$$) AS zero_per,
       try($$SELECT sem_declare_rate('dr w', 3, '1 day 1 second')$$) AS per_over_a_day,
       try($$SELECT sem_declare_rate('dr w', 3, '1 second', max_wait => '-1 second')$$)
           AS negative_max_wait;
SELECT try($$SELECT sem_declare_bucket('dr b', 3, '1 second', burst => 0)$$) AS zero_burst,
       try($$SELECT sem_declare_bucket('dr b', 1, '1 day', burst => 2)$$) AS refill_over_a_day,
       try($$SELECT sem_declare_bucket('dr b', 3, NULL)$$) AS bucket_null_per;
SELECT count(*) AS nothing_declared FROM pgsem.declarations WHERE pattern LIKE 'dr %';

-- A window of 3 per minute, a bucket of 2 per hour holding 2, a semaphore of 2.
SELECT sem_declare_rate('dr w', 3, '1 minute');
SELECT sem_declare_bucket('dr b', 2, '1 hour', burst => 2);
SELECT sem_declare('dr pool', 2);
SELECT name, is_prefix, kind, n, per, burst, max_lease, max_wait
  FROM sem_declarations WHERE name LIKE 'dr %' ORDER BY name;

-- Callers name only the limit. The window's grants are leases of its declared per, marked rate.
SELECT sem_rate('dr w') AS first, sem_rate('dr w') AS second;
SELECT sem_rate('dr w', per => '1 minute') AS the_declared_per_may_be_passed;
SELECT sem_rate('dr w') AS window_full;
SELECT count(*) AS grants, bool_and(rate) AS all_rate,
       bool_and(lease = interval '1 minute') AS each_for_its_per
  FROM pgsem.claims WHERE name = 'dr w';

-- Another per, or an n above the declared one: 22023, nothing granted. A smaller n is the
-- caller's own, stricter, limit (as with semaphores): refused while 3 are in the window.
SELECT sem_rate('dr w', per => '2 minutes');
SELECT sem_rate('dr w', 4);
SELECT sem_rate('dr w', 2) AS below_its_own_n;

-- One name, one kind: a semaphore's claim or a token bucket's grant on a declared window, a
-- window's grant or a claim on a declared bucket, a bucket's or a window's on a declared
-- semaphore without its rule: 42809 or 22004.
SELECT sem_claim('dr w');
SELECT sem_claim_session('dr w');
SELECT sem_bucket('dr w');
SELECT sem_rate('dr b');
SELECT sem_claim('dr b');
SELECT sem_claim_all(ARRAY['dr pool', 'dr b']);
SELECT sem_rate('dr pool');
SELECT sem_bucket('dr pool');
SELECT sem_rate('dr undeclared', 3);
SELECT sem_bucket('dr undeclared', per => '1 second');
SELECT count(*) AS still_three FROM pgsem.claims WHERE name LIKE 'dr %';

-- The declared bucket: n, per and burst from the declaration; a rule passed must be it.
SELECT sem_bucket('dr b') AS first, sem_bucket('dr b') AS second, sem_bucket('dr b') AS over_burst;
SELECT sem_bucket('dr b', 2, '1 hour', burst => 2) AS the_declared_rule_may_be_passed;
SELECT sem_bucket('dr b', burst => 1);
SELECT sem_bucket('dr b', 1);
SELECT sem_bucket('dr b', per => '2 hours');
SELECT sem_bucket('dr b', permits => 3);
SELECT name, n, per, burst FROM sem_buckets WHERE name = 'dr b';

-- In a set, a member on a declared window is a rate grant with the declared per, with no pers;
-- so the set is a statement of its own (25001 in a block). Its release lets the semaphore go;
-- the grant counts for its window.
SELECT sem_declare_rate('dr w2', 2, '1 minute');
BEGIN;
SELECT sem_claim_all(ARRAY['dr pool', 'dr w2']);
ROLLBACK;
SELECT cardinality(sem_claim_all(ARRAY['dr pool', 'dr w2'], timeout => '30 seconds'))
           AS set_granted;
SELECT name, rate, lease FROM pgsem.claims
 WHERE name IN ('dr pool', 'dr w2') ORDER BY name;
SELECT sem_release(id) FROM pgsem.claims WHERE name = 'dr pool';
SELECT name, count(*) AS unended FROM pgsem.claims
 WHERE name IN ('dr pool', 'dr w2') AND ended_at IS NULL GROUP BY name ORDER BY name;
SELECT sem_claim_all(ARRAY['dr pool', 'dr w2'], pers => ARRAY[NULL, '1 hour']::interval[]);

-- A prefix declares a window per name: each tenant its own 1 per hour.
SELECT sem_declare_rate('dr tenant:*', 1, '1 hour');
SELECT sem_rate('dr tenant:1') AS one_first, sem_rate('dr tenant:2') AS two_first,
       sem_rate('dr tenant:1') AS one_again;

-- Live changes: raising n lets the next grant in; a declaration as a semaphore makes the name
-- a semaphore's, whose grants need a per of their own.
SELECT sem_declare_rate('dr tenant:*', 2, '1 hour');
SELECT sem_rate('dr tenant:1') AS after_the_raise;
SELECT sem_declare('dr tenant:*', 2, max_lease => '1 hour');
SELECT sem_rate('dr tenant:1');
SELECT sem_rate('dr tenant:1', per => '1 hour') AS with_its_own_per;
SELECT name, kind, n, per FROM sem_declarations WHERE name = 'dr tenant:*';

-- A name granted as a window and then as a bucket (or the other way) would be granted twice its
-- limit: neither counts the other's grants. So a declaration of the other rate kind waits until
-- the grants in force have passed (55006), and so does removing an exact declaration whose names
-- would fall under a prefix of the other kind; a semaphore counts every holder, and may be
-- declared over either.
SELECT try($$SELECT sem_declare_bucket('dr w', 3, '1 minute')$$) AS window_to_bucket,
       try($$SELECT sem_declare_rate('dr b', 2, '1 hour')$$) AS bucket_to_window;
SELECT try($$SELECT sem_declare_bucket('dr tenant:*', 3, '1 hour')$$) AS prefix_to_bucket;
SELECT sem_declare_rate('dr px:*', 1, '1 hour');
SELECT sem_declare_bucket('dr px:a', 1, '1 hour');
SELECT sem_bucket('dr px:a') AS bucket_granted;
SELECT try($$SELECT sem_undeclare('dr px:a')$$) AS undeclare_under_a_window;
SELECT sem_declare('dr w', 3) AS window_to_semaphore;
SELECT name, kind FROM sem_declarations WHERE name IN ('dr w', 'dr b', 'dr px:a') ORDER BY name;

-- A retry with a request key is answered with its first attempt's claim, whatever the declared
-- windows say since: a set of windows alone keeps its key on the grants of its longest window at
-- the first attempt, and a retry finds it there when another member is the longest now.
SELECT sem_declare_rate('dr kx1', 2, '1 hour'), sem_declare_rate('dr kx2', 5, '1 minute');
SELECT (sem_claim_all(ARRAY['dr kx1', 'dr kx2'], request_key => 'job-43'))[1] AS first_id \gset
SELECT sem_declare_rate('dr kx2', 5, '2 minutes');
SELECT (sem_claim_all(ARRAY['dr kx1', 'dr kx2'], request_key => 'job-43'))[1] = :first_id
           AS a_shorter_window_changed;
SELECT sem_declare_rate('dr kx2', 5, '2 hours');
SELECT (sem_claim_all(ARRAY['dr kx1', 'dr kx2'], request_key => 'job-43'))[1] = :first_id
           AS another_member_now_the_longest;
SELECT name, count(*) AS grants FROM pgsem.claims WHERE name IN ('dr kx1', 'dr kx2')
 GROUP BY name ORDER BY name;

-- Privileges: only the database's owner declares; a role not granted the limit is refused
-- (42501), also when it names the rule in full; once granted, it names only the limit.
CREATE ROLE regress_dr_app;
SET ROLE regress_dr_app;
SELECT try($$SELECT sem_declare_rate('dr mine', 3, '1 second')$$) AS not_the_owner;
SELECT try($$SELECT sem_declare_bucket('dr mine', 3, '1 second')$$) AS not_the_owner_either;
SELECT sem_rate('dr w');
SELECT sem_bucket('dr b', 2, '1 hour', burst => 2);
RESET ROLE;
SELECT sem_grant('dr b', 'regress_dr_app');
SET ROLE regress_dr_app;
SELECT sem_bucket('dr b') AS may_call_once_granted_empty_bucket;
SELECT try($$UPDATE pgsem.declarations SET n = 100$$) AS no_direct_write;
RESET ROLE;

SELECT sem_undeclare(name) FROM sem_declarations WHERE name LIKE 'dr %' ORDER BY name;
DROP ROLE regress_dr_app;
