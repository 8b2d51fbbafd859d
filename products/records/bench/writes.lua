-- wrk script of bench-records-writes: every request a new write, statuses counted per class.
-- MODE=records: record creates through the admin API (ADMIN_TOKEN); MODE=forms: JSON form
-- submissions spread over FORMS forms and KEYS publishable keys (writes.sh lifts the forms rate
-- limit; the spread keeps the submissions' keys apart as real traffic would).
local mode = os.getenv("MODE") or "records"
local token = os.getenv("ADMIN_TOKEN") or ""
local nforms = tonumber(os.getenv("FORMS") or "40")
local nkeys = tonumber(os.getenv("KEYS") or "50")
local cats = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
local tags = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
local syl = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe"}
local threads = {}

function setup(thread)
  thread:set("seed", math.random(1, 1000000000))
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(seed)
  s2, s4, s5, other = 0, 0, 0, 0
end

local function word()
  local s = ""
  for _ = 1, 4 do s = s .. syl[math.random(1, #syl)] end
  return s
end

request = function()
  if mode == "forms" then
    local body = string.format('{"email":"u%d@example.test","message":"%s %s %s"}',
      math.random(1, 1000000), word(), word(), word())
    return wrk.format("POST", string.format("/forms/forms/f%d/submit", math.random(0, nforms - 1)),
      {["Content-Type"] = "application/json", ["X-API-Key"] = string.format("pk_live_bench_w%03d", math.random(0, nkeys - 1))}, body)
  end
  local body = string.format('{"data":{"title":"%s %s","category":"%s","tags":["%s"],"views":%d,"day":"2026-0%d-1%d"}}',
    word(), word(), cats[math.random(1, #cats)], tags[math.random(1, #tags)], math.random(0, 1000000),
    math.random(1, 9), math.random(0, 9))
  return wrk.format("POST", "/admin/v1/projects/bench/collections/posts/records",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end

response = function(status, headers, body)
  if status >= 200 and status < 300 then s2 = s2 + 1
  elseif status >= 500 then s5 = s5 + 1
  elseif status >= 400 then s4 = s4 + 1
  else other = other + 1 end
end

done = function(summary, latency, requests)
  local a, b, c, d = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    a, b, c, d = a + t:get("s2"), b + t:get("s4"), c + t:get("s5"), d + t:get("other")
  end
  io.write(string.format("STATUS 2xx=%d 4xx=%d 5xx=%d other=%d\n", a, b, c, d))
  io.write(string.format("RESULT %.0f %.2f %.2f\n", a / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
