//! Lua scripts run inside Redis. Each call only touches the keys it is given, and the
//! caller only ever gives keys of one slot group (one hash tag), so every script is
//! valid under Redis Cluster.
//!
//! A posting value is the concatenation of 8-byte big-endian document ids, or the
//! 3-byte marker `BIG` once the list reached the cap (a length that is not a multiple
//! of 8, so the two can never be confused).

/// `slot_of(v, d)`: where the 8-byte id `d` starts in the posting `v` (a multiple of 8
/// bytes), or nil. A plain `string.find` scans in C; taking the 8-byte substrings one by
/// one would allocate a Lua string per id, up to `big_bucket_cap` (2,000) of them for a
/// posting shared by many pages (site boilerplate).
macro_rules! slot_of {
    () => {
        r#"
local function slot_of(v, d)
  local s = 1
  while true do
    local p = string.find(v, d, s, true)
    if not p then return nil end
    if p % 8 == 1 then return p end
    s = p + 1
  end
end
"#
    };
}

/// The fields of the given buckets whose family code is ARGV[1] (one byte) and whose
/// posting holds at least ARGV[2] bytes of ids, or is `BIG`.
pub(crate) const COMMON: &str = r#"
local family = ARGV[1]
local need = tonumber(ARGV[2])
local out = {}
for _, k in ipairs(KEYS) do
  local all = redis.call('HGETALL', k)
  for i = 1, #all, 2 do
    local f, v = all[i], all[i + 1]
    if string.sub(f, 1, 1) == family and (v == 'BIG' or #v >= need) then
      out[#out + 1] = f
    end
  end
end
return out
"#;

/// Add `(key index, field, doc)` triples. ARGV[1] = cap. Returns
/// `{net change in stored entries, fields that became big...}`.
pub(crate) const ADD: &str = concat!(
    slot_of!(),
    r#"
local cap = tonumber(ARGV[1])
local delta = 0
local out = {0}
local i = 2
while i <= #ARGV do
  local k = KEYS[tonumber(ARGV[i])]
  local f = ARGV[i + 1]
  local d = ARGV[i + 2]
  i = i + 3
  local v = redis.call('HGET', k, f)
  if not v then
    redis.call('HSET', k, f, d)
    delta = delta + 1
  elseif v ~= 'BIG' then
    if not slot_of(v, d) then
      local n = #v / 8
      if n + 1 >= cap then
        redis.call('HSET', k, f, 'BIG')
        delta = delta - n
        out[#out + 1] = f
      else
        redis.call('HSET', k, f, v .. d)
        delta = delta + 1
      end
    end
  end
end
out[1] = delta
return out
"#
);

/// Remove `(key index, field, doc)` triples. Returns the number of entries removed.
/// Big buckets stay big (they are recomputed by a rebuild).
pub(crate) const REMOVE: &str = concat!(
    slot_of!(),
    r#"
local removed = 0
local i = 1
while i <= #ARGV do
  local k = KEYS[tonumber(ARGV[i])]
  local f = ARGV[i + 1]
  local d = ARGV[i + 2]
  i = i + 3
  local v = redis.call('HGET', k, f)
  if v and v ~= 'BIG' then
    local j = slot_of(v, d)
    if j then
      local rest = string.sub(v, 1, j - 1) .. string.sub(v, j + 8)
      if #rest == 0 then redis.call('HDEL', k, f) else redis.call('HSET', k, f, rest) end
      removed = removed + 1
    end
  end
end
return removed
"#
);
