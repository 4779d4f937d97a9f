-- pgTAP: declared semaphores, as separate roles -- a granted role claims (also through a group
-- role), another gets 42501, a revoke takes effect for the next claim, pgsem.require_declared,
-- the n and lease caps, a raise and a lowering of n (nothing evicted; holders above the new n
-- count until they release), prefixes kept from other owners, keyed retries. One transaction, rolled
-- back: roles, declarations and claims vanish with it. (Waiters granted in order by a live raise:
-- isolation spec sem_declared_capacity.)
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(58);

CREATE ROLE pgtap_d_app;
CREATE ROLE pgtap_d_group;
CREATE ROLE pgtap_d_member IN ROLE pgtap_d_group;
CREATE ROLE pgtap_d_other;

SELECT lives_ok($$SELECT sem_declare('pgtap-d', 2, max_lease => '1 minute')$$,
                'a superuser declares pgtap-d with n = 2 and a 1-minute maximum lease');
SELECT lives_ok($$SELECT sem_grant('pgtap-d', 'pgtap_d_app')$$, 'and grants it to pgtap_d_app');
SELECT lives_ok($$SELECT sem_grant('pgtap-d', 'pgtap_d_group')$$, 'and to the group pgtap_d_group');

-- 1. Who may claim.
SET ROLE pgtap_d_app;
SELECT isnt(sem_claim('pgtap-d', timeout => '30 seconds'), NULL, 'the granted role claims with n left out');
SELECT throws_ok($$SELECT sem_claim('pgtap-d', 3)$$, '22023', NULL, 'an n above the declared n: 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-d', timeout => '2 minutes')$$, '22023', NULL,
                 'a lease above the declared maximum: 22023');
SET ROLE pgtap_d_member;
SELECT isnt(sem_claim_session('pgtap-d'), NULL, 'a member of the granted group claims');
SELECT is(sem_claim('pgtap-d', timeout => '1 minute'), NULL, 'the declared n = 2 is full: NULL');
SET ROLE pgtap_d_other;
SELECT throws_ok($$SELECT sem_claim('pgtap-d', 1)$$, '42501', NULL,
                 'a role without the grant: 42501');
SELECT throws_ok($$SELECT sem_claim_xact('pgtap-d')$$, '42501', NULL,
                 'for a transaction claim too');
SELECT throws_ok($$SELECT sem_claim_all(ARRAY['pgtap-d', 'pgtap-free'], ARRAY[NULL, 1])$$, '42501',
                 NULL, 'and for a set that names it');
SELECT throws_ok($$SELECT sem_grant('pgtap-d', 'pgtap_d_other')$$, '42501', NULL,
                 'nor may it grant itself the right');
SELECT throws_ok($$SELECT sem_declare('pgtap-other', 1)$$, '42501', NULL,
                 'nor declare a name (not the database owner)');
RESET ROLE;

-- 2. Revoke: the next claim is refused; the live claim stays.
SELECT lives_ok($$SELECT sem_revoke('pgtap-d', 'pgtap_d_group')$$, 'the group''s right is revoked');
SET ROLE pgtap_d_member;
SELECT throws_ok($$SELECT sem_claim('pgtap-d', timeout => '1 minute')$$, '42501', NULL,
                 'the member''s next claim is refused');
SELECT ok(sem_release_session('pgtap-d', (SELECT slot FROM sem_holders
                                           WHERE name = 'pgtap-d' AND kind = 'session')),
          'its live session claim stays, and it releases it');
RESET ROLE;

-- 3. pgsem.require_declared.
SET LOCAL pgsem.require_declared = on;
SELECT throws_ok($$SELECT sem_claim('pgtap-free', 1)$$, '42501', NULL,
                 'require_declared: an undeclared name is refused');
SELECT isnt(sem_claim('pgtap-d', timeout => '1 minute'), NULL, 'a declared one is not');
SET LOCAL pgsem.require_declared = off;
SELECT isnt(sem_claim('pgtap-free', 1), NULL, 'off: the undeclared name is claimed with its n');
SELECT throws_ok($$SELECT sem_claim('pgtap-free')$$, '22004', NULL,
                 'but not without one: 22004');

-- 4. Lowering evicts nobody; raising lets new claims in at once.
SELECT is((SELECT count(*) FROM sem_holders WHERE name = 'pgtap-d'), 2::bigint,
          'pgtap-d is full: 2 holders');
SELECT lives_ok($$SELECT sem_declare('pgtap-d', 1, max_lease => '1 minute')$$, 'n lowered to 1');
SELECT is((SELECT count(*) FROM sem_holders WHERE name = 'pgtap-d'), 2::bigint,
          'both holders keep their slots');
SELECT is(sem_claim_xact('pgtap-d'), NULL, 'a new claim finds no slot below the new n');
SELECT is((SELECT peak_n FROM sem_declarations WHERE name = 'pgtap-d'), 2,
          'sem_declarations: holders up to n = 2 still count (peak_n)');
SELECT ok(sem_release((SELECT id FROM sem_holders WHERE name = 'pgtap-d' AND slot = 0)),
          'the holder of slot 0 releases');
SELECT is(sem_claim_xact('pgtap-d'), NULL,
          'slot 0 is free, but the holder of slot 1 still counts against n = 1: no claim');
SELECT ok(sem_release((SELECT id FROM sem_holders WHERE name = 'pgtap-d' AND slot = 1)),
          'the holder of slot 1 releases');
SELECT is(sem_claim_xact('pgtap-d'), 0, 'nobody holds it now: a claim gets slot 0');
SELECT lives_ok($$SELECT sem_declare('pgtap-d', 4, max_lease => '1 minute')$$, 'n raised to 4');
SELECT isnt(sem_claim_xact('pgtap-d'), NULL, 'a new claim gets one of the new slots at once');
SELECT is((SELECT n FROM sem_declarations WHERE name = 'pgtap-d'), 4, 'sem_declarations says 4');
SELECT is((SELECT peak_n FROM sem_declarations WHERE name = 'pgtap-d'), NULL::integer,
          'and no peak_n: nobody holds a slot above n');

-- 4b. A caller's own smaller n bounds where its slots are, not where the room is: lowered from 5
-- to 3 with slots 3 and 4 still held, two hold, and a claim with n = 2 gets slot 0.
SELECT lives_ok($$SELECT sem_declare('pgtap-own', 5)$$, 'pgtap-own declared with n = 5');
SELECT is((SELECT count(sem_claim_session('pgtap-own')) FROM generate_series(1, 5)), 5::bigint,
          'five session claims fill it');
SELECT lives_ok($$SELECT sem_declare('pgtap-own', 3)$$, 'n lowered to 3');
SELECT is((SELECT count(*) FILTER (WHERE sem_release_session('pgtap-own', s))
             FROM generate_series(0, 2) s), 3::bigint, 'slots 0 to 2 are released');
SELECT is(sem_claim_xact('pgtap-own', 2), 0,
          'two hold (above n): a claim with its own n = 2 gets slot 0');
SELECT is(sem_claim_xact('pgtap-own'), NULL, 'and then three hold: the declared n is full');
SELECT is((SELECT count(*) FILTER (WHERE sem_release_session('pgtap-own', s))
             FROM generate_series(3, 4) s), 2::bigint, 'the holders above n release');

-- 4c. Undeclaring a name moves it under a prefix: for its holders that is a lowering too.
SELECT lives_ok($$SELECT sem_declare('pgtap-ten:*', 2)$$, 'prefix pgtap-ten:* declared with n = 2');
SELECT lives_ok($$SELECT sem_declare('pgtap-ten:7', 10)$$, 'and pgtap-ten:7 with n = 10');
SELECT is((SELECT count(sem_claim_session('pgtap-ten:7')) FROM generate_series(1, 5)), 5::bigint,
          'five hold pgtap-ten:7');
SELECT ok(sem_undeclare('pgtap-ten:7'), 'pgtap-ten:7 undeclared: it falls under pgtap-ten:*');
SELECT is((SELECT peak_n FROM sem_declarations WHERE name = 'pgtap-ten:*'), 10,
          'the prefix counts its holders, up to the n it had');
SELECT is((SELECT count(*) FILTER (WHERE sem_release_session('pgtap-ten:7', s))
             FROM generate_series(0, 2) s), 3::bigint, 'three release');
SELECT is(sem_claim_xact('pgtap-ten:7'), NULL, 'two still hold: no claim under n = 2');
SELECT is((SELECT count(*) FILTER (WHERE sem_release_session('pgtap-ten:7', s))
             FROM generate_series(3, 4) s), 2::bigint, 'the last two release');
SELECT is(sem_claim_xact('pgtap-ten:7'), 0, 'now a claim gets in');

-- 5. A new declaration may not take names from another owner's prefix.
CREATE ROLE pgtap_d_dbo;
SELECT lives_ok($$SELECT sem_declare('pgtap-t:*', 2)$$, 'a superuser declares prefix pgtap-t:*');
DO $$BEGIN EXECUTE format('ALTER DATABASE %I OWNER TO pgtap_d_dbo', current_database()); END$$;
SET ROLE pgtap_d_dbo;
SELECT throws_ok($$SELECT sem_declare('pgtap-t:vip', 9)$$, '42501', NULL,
                 'the database owner may not declare a name under a superuser''s prefix');
SELECT throws_ok($$SELECT sem_declare('pgtap-t:v*', 9)$$, '42501', NULL,
                 'nor a longer prefix under it');
SELECT lives_ok($$SELECT sem_declare('pgtap-u:*', 3)$$, 'but declares names outside it');
RESET ROLE;

-- 6. A keyed retry is answered with its claim, whatever the declaration says since.
SET ROLE pgtap_d_app;
SELECT isnt(sem_claim('pgtap-d', timeout => '30 seconds', request_key => 'job-1'), NULL,
            'a keyed claim with n left out');
RESET ROLE;
SELECT lives_ok($$SELECT sem_declare('pgtap-d', 5, max_lease => '1 minute')$$, 'n raised to 5');
SELECT lives_ok($$SELECT sem_revoke('pgtap-d', 'pgtap_d_app')$$, 'pgtap_d_app''s right revoked');
SET ROLE pgtap_d_app;
SELECT is(sem_claim('pgtap-d', timeout => '30 seconds', request_key => 'job-1'),
          (SELECT id FROM sem_holders WHERE name = 'pgtap-d' AND kind = 'lease'
              AND role = 'pgtap_d_app'::regrole),
          'its retry answers with its claim');
SELECT throws_ok($$SELECT sem_claim('pgtap-d', timeout => '30 seconds', request_key => 'job-2')$$,
                 '42501', NULL, 'a new key is a new claim: refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
