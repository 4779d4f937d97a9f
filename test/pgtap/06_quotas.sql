-- pgTAP: quotas per role -- sem_set_quota bounds the live claims of a role (leases, transaction
-- and session claims, sets, each permit) and refuses the one over it with 53400, naming the
-- quota; only a superuser sets it; the role that claims is the one counted, SET ROLE included.
-- One transaction, rolled back. (Several sessions of one role, and the waiters quota: isolation
-- spec sem_role_quotas.)
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(31);

CREATE ROLE pgtap_q_app;
CREATE ROLE pgtap_q_other;
CREATE ROLE pgtap_q_group;
GRANT pgtap_q_group TO pgtap_q_other;

-- 1. Each kind counts, each permit counts.
SELECT lives_ok($$SELECT sem_set_quota('pgtap_q_app', 4)$$, 'a superuser gives pgtap_q_app a quota of 4');
SELECT is((SELECT max_claims || '/' || coalesce(max_waiters::text, 'none') FROM sem_quotas
            WHERE role = 'pgtap_q_app'::regrole), '4/none', 'sem_quotas shows it');
SET ROLE pgtap_q_app;
SELECT isnt(sem_claim('pgtap-q1', 5, '1 minute'), NULL, 'a lease: 1 of 4');
SELECT isnt(sem_claim_xact('pgtap-q1', 5), NULL, 'a transaction claim: 2 of 4');
SELECT isnt(sem_claim_session('pgtap-q2', 5), NULL, 'a session claim: 3 of 4');
SELECT throws_ok($$SELECT sem_claim('pgtap-q3', 5, '1 minute', permits => 2)$$, '53400',
                 'pgsem: role "pgtap_q_app" has reached its quota of live claims (max_claims = 4)',
                 'two permits more would be 5: 53400, naming the quota and its value');
SELECT throws_ok($$SELECT sem_claim_all(ARRAY['pgtap-q3', 'pgtap-q4'], ARRAY[5, 5])$$, '53400',
                 NULL, 'a set on two semaphores counts two');
SELECT isnt(sem_claim('pgtap-q3', 5, '1 minute'), NULL, 'one more: 4 of 4');
SELECT throws_ok($$SELECT sem_claim_session('pgtap-q4', 5)$$, '53400', NULL,
                 'a fifth session claim: 53400');
SELECT throws_ok($$SELECT sem_claim_xact('pgtap-q4', 5, wait => '1 second')$$, '53400', NULL,
                 'a fifth transaction claim, even one that would wait: 53400');
SELECT is((SELECT count(*) FROM sem_holders WHERE role = 'pgtap_q_app'::regrole), 4::bigint,
          'nothing was taken by the refused claims');

-- 2. A release makes room, and so does a rolled-back savepoint.
SELECT ok(sem_release_session('pgtap-q2', 0), 'the session claim is released');
SAVEPOINT before_claim;
SELECT isnt(sem_claim_xact('pgtap-q5', 5), NULL, 'a transaction claim in a savepoint fits');
ROLLBACK TO SAVEPOINT before_claim;
SELECT isnt(sem_claim('pgtap-q4', 5, '1 minute'), NULL,
            'rolled back with its savepoint, it no longer counts: a new claim fits');
SELECT throws_ok($$SELECT sem_claim('pgtap-q6', 5, '1 minute')$$, '53400', NULL,
                 'and the quota is full again');

-- 3. The role that claims is counted, under its own quota.
RESET ROLE;
SELECT lives_ok($$SELECT sem_set_quota('pgtap_q_group', 1)$$, 'the group gets a quota of 1');
SET ROLE pgtap_q_other;
SELECT isnt(sem_claim('pgtap-q7', 5, '1 minute', permits => 5), NULL,
            'a role without a quota claims what it likes');
SET ROLE pgtap_q_group;
SELECT isnt(sem_claim('pgtap-q7', 6, '1 minute'), NULL,
            'after SET ROLE to the group, the group''s claims count: 1 of 1');
SELECT throws_ok($$SELECT sem_claim('pgtap-q8', 5, '1 minute')$$, '53400', NULL,
                 'and its second is refused');
RESET ROLE;

-- 4. NULL is no maximum, 0 is none at all; only a superuser sets quotas.
SELECT lives_ok($$SELECT sem_set_quota('pgtap_q_app', NULL, 0)$$,
                'pgtap_q_app: no maximum of claims, no waiting at all');
SET ROLE pgtap_q_app;
SELECT isnt(sem_claim_session('pgtap-q9', 5), NULL, 'NULL: no claims quota');
SELECT throws_ok($$SELECT sem_set_quota('pgtap_q_app', 100)$$, '42501', NULL,
                 'a role cannot set its own quota');
SELECT throws_ok($$SET pgsem.max_claims_per_role = 100$$, '42602', NULL,
                 'and no setting of pgsem''s names one');
RESET ROLE;
SELECT throws_ok($$SELECT sem_set_quota('pgtap_q_app', -1)$$, '22023', NULL,
                 'a negative maximum: 22023');
SELECT throws_ok($$SELECT sem_set_quota(0::oid::regrole, 1)$$, '42704', NULL,
                 'an unknown role: 42704');
SELECT lives_ok($$SELECT sem_set_quota('pgtap_q_app', NULL, NULL)$$, 'both NULL: no quota');
SELECT is((SELECT count(*) FROM sem_quotas WHERE role = 'pgtap_q_app'::regrole), 0::bigint,
          'and the row is gone');

-- 5. A dropped role's quota can only be removed: a restore would give it to whichever role got
-- that OID.
CREATE ROLE pgtap_q_gone;
SELECT lives_ok($$SELECT sem_set_quota('pgtap_q_gone', 1)$$, 'a role to drop gets a quota');
SELECT 'pgtap_q_gone'::regrole::oid AS gone \gset
DROP ROLE pgtap_q_gone;
SELECT throws_ok(format('SELECT sem_set_quota(%s::oid::regrole, 5)', :gone), '42704', NULL,
                 'once dropped, its quota cannot be set');
SELECT lives_ok(format('SELECT sem_set_quota(%s::oid::regrole, NULL, NULL)', :gone),
                'but it can be removed');
SELECT is((SELECT count(*) FROM sem_quotas WHERE role::oid = :gone), 0::bigint, 'and is gone');

SELECT * FROM finish();
ROLLBACK;
