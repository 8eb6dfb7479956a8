-- forget: the request ended without a final result of its own to replay (a replay or
-- refusal from the database, a released key, a failure), or a fenced takeover in the
-- database: drop what the entry may wrongly claim.
-- KEYS[1]: the record's entry, mintid:{<key text>}.
-- ARGV: [1] token, [2] created millis of the request's fence, both empty for none.
-- A claiming marker is deleted; an entry replaying a result is deleted only when its
-- fence is not newer than the one given. The answer is the number of keys deleted.
local entry = KEYS[1]
local stored = redis.call('HMGET', entry, 's', 't', 'c')
if not stored[1] then
  return 0
end
if stored[1] ~= 'done' then
  return redis.call('DEL', entry)
end
if ARGV[2] == '' then
  return 0
end
local token, created = tonumber(stored[2]), tonumber(stored[3])
local own_token, own_created = tonumber(ARGV[1]), tonumber(ARGV[2])
if created < own_created or (created == own_created and token <= own_token) then
  return redis.call('DEL', entry)
end
return 0
