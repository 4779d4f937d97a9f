-- One claim that waits in line (up to 10 s) for a slot, then its release: two transactions, as
-- an application does them. Variables as in pgsem_pair.sql (backoff unused: nobody is refused
-- unless the wait runs out).
\set name_no random(1, :names)
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + :name_no), :n, '90 seconds', '10 seconds'), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\endif
