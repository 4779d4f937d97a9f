-- One lease claim that is never released: it ends when its lease runs out, as a rate grant does
-- (pgsem_rate_grant.sql's peer). Variables: n, per_ms (the lease), group.
SELECT sem_claim('bench-lease-' || :group, :n, make_interval(secs => :per_ms / 1000.0));
