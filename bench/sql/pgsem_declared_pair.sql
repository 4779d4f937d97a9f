-- pgsem_pair.sql on a declared semaphore: the caller leaves n out (1.2). Variables: names,
-- group, backoff; the declaration (bench/sql/setup.sql) says n.
\set name_no random(1, :names)
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + :name_no)), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\else
\sleep :backoff us
\endif
