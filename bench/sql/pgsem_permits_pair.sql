-- A claim of several permits and, when granted, its release (1.2). Variables: n, permits, group.
SELECT coalesce(sem_claim('bench-' || (:group * 1000000 + 1), :n, permits => :permits), 0) AS id \gset
\if :id > 0
SELECT sem_release(:id);
\endif
