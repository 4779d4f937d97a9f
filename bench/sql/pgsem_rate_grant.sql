-- One call of a sliding-window rate limit (1.2): a grant when the window has room. Variables: n,
-- per_ms (the window), group (keeps cells' names apart).
SELECT sem_rate('bench-rate-' || :group, :n, make_interval(secs => :per_ms / 1000.0));
