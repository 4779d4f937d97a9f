-- One claim that waits in line (up to 10 s) for a slot, then its release: two transactions, as
-- an application does them. Variables as in pgsem_pair.sql (backoff unused: nobody is refused
-- unless the wait runs out), but client i always waits on semaphore i mod :names, so that with
-- several names each has its own fixed share of the clients and its own line.
\set name_no :client_id % :names + 1
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + :name_no), :n, '90 seconds', '10 seconds'), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\endif
