-- A sliding-window rate limit in one script, as a demanding Redis user writes it: a sorted set of
-- the grants by time; drop those older than the window, grant if fewer than n - permits + 1
-- remain. The clock is Redis' own (TIME). No persistence in the benchmark's Redis.
-- KEYS: the limit; ARGV: n, window (ms), permits, identifier. Returns 1 when granted, else 0.
local key = KEYS[1]
local n, window_ms, permits, id = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
redis.call('ZREMRANGEBYSCORE', key, '-inf', now_ms - window_ms)
if redis.call('ZCARD', key) + permits > n then
    return 0
end
for i = 1, permits do
    redis.call('ZADD', key, now_ms, id .. ':' .. i)
end
redis.call('PEXPIRE', key, window_ms)
return 1
