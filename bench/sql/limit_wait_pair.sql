-- The limit for pgsem_wait_pair.sql (setup.sql: limit_claim, limit_release): client i waits in
-- the queue of slot i mod n, then claims and releases, in two transactions.
\set slot :client_id % :n
SELECT limit_claim(:slot) AS id \gset
SELECT limit_release(:id, :slot);
