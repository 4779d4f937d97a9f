-- One claim and, when granted, its release: two transactions, as an application does them.
-- Variables: n (slots), names (how many semaphores), group (keeps cells' names apart),
-- backoff (microseconds a refused caller waits before its next call; 0 retries at once).
\set name_no random(1, :names)
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + :name_no), :n), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\else
\sleep :backoff us
\endif
