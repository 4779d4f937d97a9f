-- The same two limits from single claims, one after the other, as without sem_claim_all: the
-- first is held while the second is asked for, and given back when the second is refused.
-- Variables: n (of each), group.
SELECT coalesce(sem_claim('bench-a-' || :group, :n), 0) AS a \gset
\if :a > 0
SELECT coalesce(sem_claim('bench-b-' || :group, :n), 0) AS b \gset
\if :b > 0
SELECT sem_release(:b);
\endif
SELECT sem_release(:a);
\endif
