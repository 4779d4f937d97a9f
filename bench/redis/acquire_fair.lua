-- The fair semaphore of Redis in Action (listing 6.14, acquire_fair_semaphore) as one script, so
-- that an acquire is one round trip, as a demanding Redis user would write it. Same steps, same
-- keys: drop timed-out holders, refresh the owner ZSET, draw a counter, join both ZSETs, and keep
-- the place if the rank is below the limit. The clock is Redis' own (TIME), not the client's.
-- KEYS: semname, semname:owner, semname:counter; ARGV: limit, timeout (s), identifier.
-- Returns 1 when acquired, 0 when not.
local semname, czset, ctr = KEYS[1], KEYS[2], KEYS[3]
local limit, timeout, identifier = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', semname, '-inf', now - timeout)
redis.call('ZINTERSTORE', czset, 2, czset, semname, 'WEIGHTS', 1, 0)
local counter = redis.call('INCR', ctr)
redis.call('ZADD', semname, now, identifier)
redis.call('ZADD', czset, counter, identifier)
if redis.call('ZRANK', czset, identifier) < limit then
    return 1
end
redis.call('ZREM', semname, identifier)
redis.call('ZREM', czset, identifier)
return 0
