-- Claims and PREPARE TRANSACTION. A server with prepared transactions disabled (the default,
-- max_prepared_transactions = 0) refuses every PREPARE: expected/81_prepared_transactions_1.out is
-- that server's answer, and the test suite runs every case once against such a server.
-- PREPARE TRANSACTION with a transaction claim is refused; leases go through 2PC.
BEGIN;
SELECT sem_claim_xact('prep', 1) AS slot;
PREPARE TRANSACTION 'pgsem_regress_prep';
SELECT count(*) AS prepared FROM pg_prepared_xacts WHERE gid = 'pgsem_regress_prep';
SELECT count(*) AS freed FROM sem_holders WHERE name = 'prep';
BEGIN;
SELECT sem_claim('prep', 1) IS NOT NULL AS lease;
PREPARE TRANSACTION 'pgsem_regress_prep';
SELECT committed, prepared_gid FROM sem_holders WHERE name = 'prep';
COMMIT PREPARED 'pgsem_regress_prep';
SELECT committed FROM sem_holders WHERE name = 'prep';
SELECT count(*) FILTER (WHERE sem_release(id)) AS released FROM sem_holders WHERE name = 'prep';
-- So is a PREPARE after a session claim in the transaction: the claim is the session's, which a
-- ROLLBACK PREPARED could not take back.
BEGIN;
SELECT sem_claim_session('prep-session', 1) AS slot;
PREPARE TRANSACTION 'pgsem_regress_prep';
SELECT count(*) AS prepared FROM pg_prepared_xacts WHERE gid = 'pgsem_regress_prep';
SELECT count(*) AS gone_with_the_transaction FROM sem_holders WHERE name = 'prep-session';

-- A retry waits for a first attempt still in flight, here a prepared transaction; a wait cut
-- short (lock_timeout) says which key of which semaphore it waited for.
BEGIN;
SELECT sem_claim('prep key', 2, '1 hour', request_key => 'gid') IS NOT NULL AS prepared_claim;
PREPARE TRANSACTION 'regress_keys_prepared';
SET lock_timeout = '50ms';
SELECT sem_claim('prep key', 2, '1 hour', request_key => 'gid') IS NOT NULL AS claimed;
RESET lock_timeout;
COMMIT PREPARED 'regress_keys_prepared';
SELECT sem_claim('prep key', 2, '1 hour', request_key => 'gid') =
           (SELECT id FROM sem_holders WHERE name = 'prep key') AS retry_gets_prepared_claim,
       (SELECT count(*) FROM sem_holders WHERE name = 'prep key') AS held;
SELECT sem_release(id) FROM (SELECT DISTINCT id FROM sem_holders WHERE name = 'prep key') h;
