-- Token buckets: sem_bucket(name, n, per, permits, wait, burst) grants n permits per `per`, up to
-- burst (default n) at once; its whole state is one row per name. Bad input is an error that
-- changes nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all

-- NULLs (22004), then values out of range (22023); a NULL burst is n, not an error.
SELECT try($$SELECT sem_bucket(NULL, 2, '1 minute')$$) AS null_name,
       try($$SELECT sem_bucket('b bad', NULL, '1 minute')$$) AS null_n,
       try($$SELECT sem_bucket('b bad', 2, NULL)$$) AS null_per,
       try($$SELECT sem_bucket('b bad', 2, '1 minute', NULL)$$) AS null_permits,
       try($$SELECT sem_bucket('b bad', 2, '1 minute', 1, NULL)$$) AS null_wait;
SELECT try($$SELECT sem_bucket('', 2, '1 minute')$$) AS empty_name,
       try(format('SELECT sem_bucket(%L, 2, %L)', repeat('b', 257), '1 minute')) AS long_name,
       try($$SELECT sem_bucket('b bad', 0, '1 minute')$$) AS zero_n,
       try($$SELECT sem_bucket('b bad', 1000001, '1 minute')$$) AS huge_n;
SELECT try($$SELECT sem_bucket('b bad', 2, '0')$$) AS zero_per,
       try($$SELECT sem_bucket('b bad', 2, '1 day 1 second')$$) AS per_over_a_day,
       try($$SELECT sem_bucket('b bad', 2, '1 minute', burst => 0)$$) AS zero_burst,
       try($$SELECT sem_bucket('b bad', 2, '1 minute', burst => 1000001)$$) AS huge_burst;
SELECT try($$SELECT sem_bucket('b bad', 2, '1 minute', 0)$$) AS zero_permits,
       try($$SELECT sem_bucket('b bad', 2, '1 minute', 3)$$) AS permits_over_burst,
       try($$SELECT sem_bucket('b bad', 9, '1 minute', 3, burst => 2)$$) AS permits_over_set_burst,
       try($$SELECT sem_bucket('b bad', 2, '1 minute', 1, '-1 second')$$) AS negative_wait;
-- A bucket refills from empty (burst at n per per) within a day: a bigger burst would let one
-- caller hold a name back for longer (22023). A burst of 24 at one an hour is a day exactly.
SELECT try($$SELECT sem_bucket('b bad', 1, '1 day', burst => 2)$$) AS refill_over_a_day,
       try($$SELECT sem_bucket('b bad', 1, '1 hour', burst => 25)$$) AS refill_of_25_hours;
SELECT count(*) AS no_row FROM sem_buckets WHERE name = 'b bad';
SELECT sem_bucket('b day', 1, '1 hour', burst => 24) AS refill_of_a_day;

-- Not inside a transaction block or subtransaction (25001), as sem_rate.
SELECT try($$SELECT sem_bucket('b tx', 1, '1 hour')$$) AS in_a_subtransaction;
BEGIN;
SELECT sem_bucket('b tx', 1, '1 hour') AS in_a_block;
ROLLBACK;
SELECT count(*) AS no_row FROM sem_buckets WHERE name = 'b tx';

-- A full bucket grants its burst at once, then refuses; one row holds its state.
SELECT count(*) FILTER (WHERE granted) AS granted, count(*) FILTER (WHERE NOT granted) AS refused
  FROM (SELECT sem_bucket('b one', 3, '1 hour') AS granted FROM generate_series(1, 5)) g;
SELECT name, n, per, burst, available, full_at > now() + '59 minutes' AS full_in_an_hour
  FROM sem_buckets WHERE name = 'b one';
SELECT count(*) AS rows FROM pgsem.buckets WHERE name = 'b one';

-- Weighted: all of a grant's permits or none; a smaller burst than n.
SELECT sem_bucket('b weighted', 10, '1 hour', permits => 3, burst => 4) AS three,
       sem_bucket('b weighted', 10, '1 hour', permits => 3, burst => 4) AS three_more_refused,
       sem_bucket('b weighted', 10, '1 hour', permits => 1, burst => 4) AS one_fits;
SELECT available FROM sem_buckets WHERE name = 'b weighted';

-- The bucket refills at n per per: 2 per 2 seconds is one permit every second.
SELECT sem_bucket('b refill', 2, '2 seconds') AS a,
       sem_bucket('b refill', 2, '2 seconds') AS b,
       sem_bucket('b refill', 2, '2 seconds') AS c_refused;
SELECT pg_sleep(1.05);
SELECT sem_bucket('b refill', 2, '2 seconds') AS one_came_back,
       sem_bucket('b refill', 2, '2 seconds') AS not_two;

-- A caller that waits is granted when its permits fit: one interval (per / n) after the bucket
-- ran dry, not before; a wait shorter than that is refused when it runs out.
SELECT clock_timestamp() AS before_dry \gset
SELECT sem_bucket('b wait', 1, '1 second') AS first;
SELECT sem_bucket('b wait', 1, '1 second', wait => '10 milliseconds') AS short_wait_refused;
SELECT sem_bucket('b wait', 1, '1 second', wait => '5 seconds') AS waited;
SELECT clock_timestamp() - :'before_dry'::timestamptz >= '1 second' AS not_before_it_fits,
       clock_timestamp() - :'before_dry'::timestamptz < '4 seconds' AS not_long_after;

-- A pause holds a bucket back too, waiters until it ends.
SELECT sem_pause('b paused', clock_timestamp() + interval '1 second') IS NOT NULL AS paused;
SELECT sem_bucket('b paused', 5, '1 second') AS refused_while_paused;
SELECT sem_bucket('b paused', 5, '1 second', wait => '5 seconds') AS granted_at_its_end;
SELECT count(*) AS pauses_left FROM sem_pauses WHERE name = 'b paused';

-- Ordinary roles may call it, but not write the table; a declared name's grants are its own.
CREATE ROLE pgsem_bucket_user;
SET ROLE pgsem_bucket_user;
SELECT sem_bucket('b role', 1, '1 hour') AS an_ordinary_role_is_granted;
SELECT try($$UPDATE pgsem.buckets SET tat = now() - interval '1 day'$$) AS no_direct_write;
SELECT try($$DELETE FROM pgsem.buckets$$) AS no_direct_delete;
SELECT sem_bucket('b role', 1, '1 hour') AS still_refused;
RESET ROLE;
SELECT sem_declare('b declared', 5, max_lease => '1 minute', max_wait => '200 milliseconds');
SET ROLE pgsem_bucket_user;
SELECT try($$SELECT sem_bucket('b declared', 5, '1 minute')$$) AS declared_for_others;
RESET ROLE;
-- A declared name bounds a bucket's rule: n and burst at most its n, per at most its maximum
-- lease (22023); the wait is cut to its maximum wait.
SELECT sem_grant('b declared', 'pgsem_bucket_user');
SET ROLE pgsem_bucket_user;
SELECT try($$SELECT sem_bucket('b declared', 6, '1 minute')$$) AS n_over_declared,
       try($$SELECT sem_bucket('b declared', 5, '1 minute', burst => 6)$$) AS burst_over_declared,
       try($$SELECT sem_bucket('b declared', 5, '2 minutes')$$) AS per_over_max_lease;
SELECT sem_bucket('b declared', 1, '1 minute') AS within_the_declaration;
SELECT sem_bucket('b declared', 1, '1 minute', wait => '10 seconds') AS wait_cut_to_200_ms,
       clock_timestamp() - now() < interval '5 seconds' AS well_before_10_seconds;
RESET ROLE;
SELECT sem_undeclare('b declared');
DROP ROLE pgsem_bucket_user;

-- A bucket that makes a new row removes rows idle (full) for an hour: the same as no row.
INSERT INTO pgsem.buckets (name, tat, n, per, burst, granted_at)
    VALUES ('b idle', now() - interval '2 hours', 1, '1 minute', 1, now() - interval '2 hours'),
           ('b recent', now() - interval '10 minutes', 1, '1 minute', 1, now() - interval '11 minutes');
SELECT sem_bucket('b new', 1, '1 minute') AS new_row;
SELECT name FROM pgsem.buckets WHERE name IN ('b idle', 'b recent', 'b new') ORDER BY name;

-- The view counts with the grant's own interval, a whole microsecond at least: a million permits
-- a millisecond, its TAT half a second ahead, has half a million permits now.
BEGIN;
INSERT INTO pgsem.buckets (name, tat, n, per, burst, granted_at)
    VALUES ('b fast', now() + interval '0.5 seconds', 1000000, '1 millisecond', 1000000, now());
SELECT available FROM sem_buckets WHERE name = 'b fast';
ROLLBACK;

-- A logical replication worker applies no change to the buckets (a subscriber's are its own).
SELECT tgname, tgenabled FROM pg_trigger
 WHERE tgrelid = 'pgsem.buckets'::regclass AND NOT tgisinternal ORDER BY tgname;

-- Grants keep only the primary key: another index on the table is refused (55000), not corrupted.
CREATE INDEX buckets_by_tat ON pgsem.buckets (tat);
SELECT sem_bucket('b indexed', 1, '1 minute') AS extra_index_refused;
DROP INDEX pgsem.buckets_by_tat;
SELECT sem_bucket('b indexed', 1, '1 minute') AS granted_without_it;

-- A row edited by hand (only the extension's owner can) to a TAT no rule sets: 'infinity' counts
-- as a day ahead (refused, no overflow), '-infinity' as a full bucket; the view shows both.
INSERT INTO pgsem.buckets VALUES ('b edited inf', 'infinity', 1, '1 second', 1, now()),
                                 ('b edited -inf', '-infinity', 1, '1 second', 1, now());
SELECT name, available, full_at - now() <= interval '1 day' AS within_a_day
  FROM sem_buckets WHERE name LIKE 'b edited%' ORDER BY name;
SELECT sem_bucket('b edited inf', 1, '1 second') AS refused,
       sem_bucket('b edited -inf', 1, '1 second') AS granted;
