-- check: a request's look at the fast path before the database, in one round trip.
-- KEYS[1]: the record's entry, mintid:{<key text>}.
-- ARGV[1]: the payload fingerprint (32 bytes); ARGV[2]: the claiming marker's time to
-- live in milliseconds (the policy's lease).
-- No entry: this request sets a claiming marker (status and fingerprint) and goes to
-- the database; the answer is nil. An entry: its fields s (status: claiming or done),
-- f (fingerprint), t (token), c (created millis), o (outcome), ct (content type),
-- b (body), e (error), missing ones nil, then its remaining time to live in
-- milliseconds, as text. The core reads the answer (docs/spec.md, "The fast path").
local entry = KEYS[1]
if redis.call('HSETNX', entry, 's', 'claiming') == 1 then
  redis.call('HSET', entry, 'f', ARGV[1])
  redis.call('PEXPIRE', entry, ARGV[2])
  return false
end
local fields = redis.call('HMGET', entry, 's', 'f', 't', 'c', 'o', 'ct', 'b', 'e')
fields[9] = tostring(redis.call('PTTL', entry))
return fields
