-- pgsem_pair.sql for callers that, like a web request answered "503, try later", do not retry
-- the instant they get NULL: they back off for a millisecond.
\set name_no random(1, :names)
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + :name_no), :n), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\else
\sleep 1 ms
\endif
