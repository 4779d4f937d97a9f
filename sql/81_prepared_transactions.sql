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
