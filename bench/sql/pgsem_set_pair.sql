-- One claim on two semaphores at once (1.2) and, when granted, its release: one call each way.
-- Variables: n (of each), group.
SELECT coalesce((sem_claim_all(ARRAY['bench-a-' || :group, 'bench-b-' || :group],
                               ARRAY[:n, :n]::integer[]))[1], 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\endif
