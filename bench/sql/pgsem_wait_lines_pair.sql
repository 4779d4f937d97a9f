-- The waiting cell's 4 slots as 4 semaphores of 1 slot, each with its own line: client i waits
-- on semaphore i mod :lines. Set beside pgsem_wait_pair.sql it prices the single line: if first
-- place passing from waiter to waiter held the one-line cell back, 4 lines passing in parallel
-- would make more pairs.
\set line :client_id % :lines
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + :line), 1, '90 seconds', '10 seconds'), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\endif
