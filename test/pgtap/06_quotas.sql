-- pgTAP: quotas per role -- pgsem.max_claims_per_role counts the live claims of the claiming role
-- (leases, transaction and session claims, sets, each permit) and refuses the one over it with
-- 53400, naming the quota; only a superuser sets it. One transaction, rolled back. (Several
-- sessions of one role, and the waiters quota: isolation spec sem_role_quotas.)
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(19);

CREATE ROLE pgtap_q_app;
CREATE ROLE pgtap_q_other;

-- 1. Each kind counts, each permit counts.
SET LOCAL pgsem.max_claims_per_role = 4;
SET ROLE pgtap_q_app;
SELECT isnt(sem_claim('pgtap-q1', 5, '1 minute'), NULL, 'a lease: 1 of 4');
SELECT isnt(sem_claim_xact('pgtap-q1', 5), NULL, 'a transaction claim: 2 of 4');
SELECT isnt(sem_claim_session('pgtap-q2', 5), NULL, 'a session claim: 3 of 4');
SELECT throws_ok($$SELECT sem_claim('pgtap-q3', 5, '1 minute', permits => 2)$$, '53400',
                 'pgsem: role "pgtap_q_app" has reached its quota of live claims (pgsem.max_claims_per_role = 4)',
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

-- 2. A release makes room; another role has its own count.
SELECT ok(sem_release_session('pgtap-q2', 0), 'the session claim is released');
SELECT isnt(sem_claim('pgtap-q4', 5, '1 minute'), NULL, 'and a new claim fits again');
SET ROLE pgtap_q_other;
SELECT isnt(sem_claim('pgtap-q4', 5, '1 minute', permits => 4), NULL,
            'another role under the same setting counts its own claims only');
SELECT throws_ok($$SELECT sem_claim_xact('pgtap-q1', 5)$$, '53400', NULL,
                 'and is refused at its own fifth');
RESET ROLE;

-- 3. 0 is no quota; only a superuser sets it.
SET LOCAL pgsem.max_claims_per_role = 0;
SET ROLE pgtap_q_app;
SELECT isnt(sem_claim_session('pgtap-q5', 5), NULL, '0: no quota');
SELECT throws_ok($$SET pgsem.max_claims_per_role = 100$$, '42501', NULL,
                 'a role cannot set its own quota');
SELECT throws_ok($$SET pgsem.max_waiters_per_role = 100$$, '42501', NULL,
                 'nor its waiters quota');
SELECT throws_ok($$ALTER ROLE pgtap_q_app SET pgsem.max_claims_per_role = 100$$, '42501', NULL,
                 'nor give itself one with ALTER ROLE');
RESET ROLE;
SELECT lives_ok($$ALTER ROLE pgtap_q_app SET pgsem.max_claims_per_role = 2$$,
                'a superuser sets it per role with ALTER ROLE');
SELECT is((SELECT setconfig FROM pg_db_role_setting
            WHERE setrole = 'pgtap_q_app'::regrole AND setdatabase = 0),
          ARRAY['pgsem.max_claims_per_role=2'], 'where every new session of the role reads it');

SELECT * FROM finish();
ROLLBACK;
