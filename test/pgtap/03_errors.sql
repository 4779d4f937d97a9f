-- pgTAP: bad input is an error with a documented SQLSTATE, never a silent NULL; and a role may
-- not act on another role's claim.
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(61);

------------------------------------------------------------------------------------------------
-- sem_claim: argument checks (12 by SQLSTATE, 4 by SQLSTATE and message)
------------------------------------------------------------------------------------------------
SELECT throws_ok($$SELECT sem_claim(NULL, 1)$$, '22004', NULL,
                 'sem_claim(NULL, 1): 22004 null_value_not_allowed');
SELECT throws_ok($$SELECT sem_claim('', 1)$$, '22023', NULL,
                 'sem_claim('''', 1): 22023 invalid_parameter_value');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 0)$$, '22023', NULL,
                 'sem_claim(name, 0): 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', -1)$$, '22023', NULL,
                 'sem_claim(name, -1): 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1000001)$$, '22023', NULL,
                 'sem_claim(name, 1000001): 22023');
-- permits: NULL, below 1, above n, above the limit; each kind of claim, nothing taken.
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 4, '1 minute', '0', NULL)$$, '22004', NULL,
                 'sem_claim with NULL permits: 22004');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 4, permits => 0)$$, '22023', NULL,
                 'sem_claim with permits = 0: 22023');
SELECT throws_ok($$SELECT sem_claim_xact('pgtap-err', 4, permits => 5)$$, '22023', NULL,
                 'sem_claim_xact with permits above n: 22023');
SELECT throws_ok($$SELECT sem_claim_session('pgtap-err', 2000, permits => 1001)$$, '22023', NULL,
                 'sem_claim_session with permits above 1000: 22023');
SELECT is((SELECT count(*) FROM sem_holders WHERE name = 'pgtap-err'), 0::bigint,
          'no bad permits took a slot');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', NULL)$$, '22004', NULL,
                 'sem_claim(name, NULL): 22004');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1, '0')$$, '22023', NULL,
                 'sem_claim(name, 1, ''0''): 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1, '-5 seconds')$$, '22023', NULL,
                 'sem_claim(name, 1, ''-5 seconds''): 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1, '0.5 milliseconds')$$, '22023', NULL,
                 'sem_claim(name, 1, ''0.5 milliseconds''): 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1, '1 day 1 second')$$, '22023', NULL,
                 'sem_claim(name, 1, ''1 day 1 second''): 22023');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1, NULL)$$, '22004', NULL,
                 'sem_claim(name, 1, NULL): 22004');
SELECT throws_ok(format('SELECT sem_claim(%L, 1)', repeat('x', 257)), '22023', NULL,
                 'sem_claim(257-byte name, 1): 22023');

SELECT throws_ok($$SELECT sem_claim(NULL, 1)$$, '22004',
                 'sem_claim(): the semaphore name must not be null',
                 'sem_claim(NULL, 1): message');
SELECT throws_ok($$SELECT sem_claim('', 1)$$, '22023',
                 'sem_claim(): the semaphore name must not be empty',
                 'sem_claim('''', 1): message');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 0)$$, '22023',
                 'sem_claim(): n must be at least 1, not 0',
                 'sem_claim(name, 0): message');
SELECT throws_ok($$SELECT sem_claim('pgtap-err', 1, '0')$$, '22023',
                 'sem_claim(): the timeout must be positive',
                 'sem_claim(name, 1, ''0''): message');
-- (Failed claims changed nothing: checked in 04_behaviour.sql's sem_history counts.)

------------------------------------------------------------------------------------------------
-- sem_fence, sem_renew, sem_prune_history (10)
------------------------------------------------------------------------------------------------
SELECT throws_ok($$SELECT sem_fence(NULL)$$, '22004',
                 'sem_fence(): the claim id must not be null', 'sem_fence(NULL): 22004');
SELECT throws_ok($$SELECT sem_fence(-1)$$, '42704',
                 'sem_fence(): there is no claim -1', 'sem_fence(unknown id): 42704 undefined_object');
SELECT throws_ok($$SELECT sem_fence(9223372036854775807)$$, '42704', NULL,
                 'sem_fence(largest bigint, never issued): 42704');

SELECT sem_claim('pgtap-err-live', 1) AS live_claim \gset
SELECT throws_ok(format('SELECT sem_renew(%s, %L)', :live_claim, '0'), '22023', NULL,
                 'sem_renew(id, ''0''): 22023');
SELECT throws_ok(format('SELECT sem_renew(%s, %L)', :live_claim, '2 days'), '22023', NULL,
                 'sem_renew(id, ''2 days''): 22023');
SELECT lives_ok(format('SELECT sem_fence(%s)', :live_claim),
                'sem_fence(live claim of this transaction) succeeds');
SELECT ok(sem_release(:live_claim), 'the fenced claim is released by its holder');
SELECT throws_ok(format('SELECT sem_fence(%s)', :live_claim), '55000', NULL,
                 'sem_fence(released claim): 55000 object_not_in_prerequisite_state');
SELECT throws_ok($$SELECT sem_prune_history(-1)$$, '22023', NULL,
                 'sem_prune_history(-1): 22023');
SELECT throws_ok($$SELECT sem_prune_history(NULL)$$, '22004', NULL,
                 'sem_prune_history(NULL): 22004 (STRICT up to 1.1, which answered NULL)');
SELECT throws_ok($$SELECT sem_renew(NULL, '-1 s')$$, '22023', NULL,
                 'sem_renew(NULL, ''-1 s''): 22023, the timeout checked before the id');

------------------------------------------------------------------------------------------------
-- Text-keyed advisory locks: a NULL key is an error for all ten (10 + 1), never "locked nothing"
------------------------------------------------------------------------------------------------
SELECT throws_ok(format('SELECT %I(NULL)', f), '22004', NULL, format('%s(NULL): 22004', f))
  FROM unnest(ARRAY['advisory_lock_text', 'advisory_lock_text_shared',
                    'advisory_try_lock_text', 'advisory_try_lock_text_shared',
                    'advisory_session_lock_text', 'advisory_session_lock_text_shared',
                    'advisory_session_try_lock_text', 'advisory_session_try_lock_text_shared',
                    'advisory_session_unlock_text', 'advisory_session_unlock_text_shared']) f;
SELECT throws_ok($$SELECT advisory_lock_text(NULL)$$, '22004',
                 'advisory_lock_text(): the lock key must not be null',
                 'advisory_lock_text(NULL): message');

------------------------------------------------------------------------------------------------
-- The NULL answers of the STRICT functions, and of sem_renew's id (4)
------------------------------------------------------------------------------------------------
SELECT is(fnv1a_64(NULL::text), NULL, 'fnv1a_64(NULL::text) is NULL');
SELECT is(sem_release(NULL), NULL, 'sem_release(NULL) is NULL');
SELECT is(sem_held(NULL), NULL, 'sem_held(NULL) is NULL');
SELECT is(sem_renew(NULL), NULL, 'sem_renew(NULL) is NULL (not STRICT, but a NULL id gives NULL)');

------------------------------------------------------------------------------------------------
-- Another role's claim (15)
------------------------------------------------------------------------------------------------
CREATE ROLE pgtap_alice NOLOGIN;
CREATE ROLE pgtap_bob NOLOGIN;            -- no privilege, no membership
CREATE ROLE pgtap_carol NOLOGIN IN ROLE pgtap_alice;

SET LOCAL ROLE pgtap_alice;
SELECT sem_claim('pgtap-priv', 2) AS alice_claim \gset
SELECT is((SELECT role::text FROM sem_holders WHERE id = :alice_claim), 'pgtap_alice',
          'the claim is recorded as pgtap_alice''s');

SET LOCAL ROLE pgtap_bob;
SELECT throws_ok(format('SELECT sem_release(%s)', :alice_claim), '42501', NULL,
                 'pgtap_bob cannot release pgtap_alice''s claim: 42501');
SELECT throws_ok(format('SELECT sem_release(%s)', :alice_claim), '42501',
                 format('sem_release(): permission denied for claim %s', :alice_claim),
                 'sem_release by another role: message names the claim');
SELECT throws_ok(format('SELECT sem_renew(%s, %L)', :alice_claim, '1 hour'), '42501', NULL,
                 'pgtap_bob cannot renew pgtap_alice''s claim: 42501');
SELECT throws_ok(format('SELECT sem_renew(%s)', :alice_claim), '42501', NULL,
                 'pgtap_bob cannot renew it with the default lease either: 42501');
SELECT throws_ok(format('SELECT sem_fence(%s)', :alice_claim), '42501', NULL,
                 'pgtap_bob cannot fence pgtap_alice''s claim: 42501');
SELECT is(sem_held(:alice_claim), true, 'anyone may ask whether the claim is held: it still is');
SELECT isnt(sem_claim('pgtap-priv', 2), NULL, 'pgtap_bob may claim the other slot');
SELECT is(sem_claim('pgtap-priv', 2), NULL, 'the semaphore is now full for pgtap_bob');

SET LOCAL ROLE pgtap_carol;
SELECT is(sem_renew(:alice_claim), true, 'a member of pgtap_alice may renew her claim');

RESET ROLE;
SET LOCAL ROLE pgtap_alice;
SELECT is((SELECT status FROM sem_history WHERE id = :alice_claim), 'held',
          'after the refused attempts the claim is still held');
SELECT is(sem_release(:alice_claim), true, 'pgtap_alice releases her own claim');
SELECT is(sem_release(:alice_claim), false, 'a second release says false');

RESET ROLE;
SELECT is(sem_release((SELECT max(id) FROM sem_holders WHERE name = 'pgtap-priv')), true,
          'a superuser may release anyone''s claim');

SELECT * FROM finish();
ROLLBACK;
