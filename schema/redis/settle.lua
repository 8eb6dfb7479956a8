-- settle: after the database committed a final result, the entry that replays it.
-- KEYS[1]: the record's entry, mintid:{<key text>}.
-- ARGV: [1] fingerprint, [2] token, [3] created millis (the fence), [4] outcome
-- (succeeded or failed), [5] '1' when a response follows, [6] its content type,
-- [7] its body, [8] '1' when an error text follows, [9] the error text, [10] the
-- entry's time to live in milliseconds (below the record's retention).
-- An entry already replaying a newer or the same fence is kept (answer 0); anything
-- else is replaced (answer 1).
local entry = KEYS[1]
local stored = redis.call('HMGET', entry, 's', 't', 'c')
if stored[1] == 'done' then
  local token, created = tonumber(stored[2]), tonumber(stored[3])
  local new_token, new_created = tonumber(ARGV[2]), tonumber(ARGV[3])
  if created > new_created or (created == new_created and token >= new_token) then
    return 0
  end
end
redis.call('DEL', entry)
redis.call('HSET', entry, 's', 'done', 'f', ARGV[1], 't', ARGV[2], 'c', ARGV[3], 'o', ARGV[4])
if ARGV[5] == '1' then
  redis.call('HSET', entry, 'ct', ARGV[6], 'b', ARGV[7])
end
if ARGV[8] == '1' then
  redis.call('HSET', entry, 'e', ARGV[9])
end
redis.call('PEXPIRE', entry, ARGV[10])
return 1
