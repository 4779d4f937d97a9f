-- release_fair_semaphore of Redis in Action (listing 6.15) as one script: remove the identifier
-- from both ZSETs. KEYS: semname, semname:owner; ARGV: identifier. Returns 1 if it was held.
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return removed
