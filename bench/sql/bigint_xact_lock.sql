-- Postgres' own transaction-level advisory lock on a number the client computed.
\set k random(1, 1000000000)
BEGIN;
SELECT pg_advisory_xact_lock(:k);
COMMIT;
