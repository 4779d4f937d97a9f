-- A GCRA token bucket in one script, as redis-cell or a demanding Redis user writes it: one key
-- holds the theoretical arrival time (TAT, in microseconds); a grant of `permits` fits when the
-- new TAT is at most `burst` intervals ahead of now. The clock is Redis' own (TIME). No
-- persistence in the benchmark's Redis.
-- KEYS: the bucket; ARGV: n, period (ms), permits, burst. Returns 1 when granted, else 0.
local key = KEYS[1]
local n, period_ms, permits, burst =
    tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = math.ceil(period_ms * 1000 / n)
local tat = tonumber(redis.call('GET', key) or '0')
if tat < now then tat = now end
local new_tat = tat + permits * interval
if new_tat - burst * interval > now then
    return 0
end
redis.call('SET', key, string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return 1
