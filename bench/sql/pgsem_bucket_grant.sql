-- One call of a token bucket (1.2): a grant when the bucket has a token. Variables: n, per_ms
-- (n per per_ms, burst n), group (keeps cells' names apart).
SELECT sem_bucket('bench-bucket-' || :group, :n, make_interval(secs => :per_ms / 1000.0));
