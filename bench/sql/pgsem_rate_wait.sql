-- One call of a sliding-window rate limit that waits in line up to 2 s for the window's edge
-- (the saturation run). Variables: n, per_ms, group.
SELECT sem_rate('bench-rate-' || :group, :n, make_interval(secs => :per_ms / 1000.0),
                wait => '2 seconds');
