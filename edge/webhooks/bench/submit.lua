-- wrk script of bench-hooks-wrk: every request a new JSON submission of form FORM with key KEY;
-- statuses counted per class. Prints "STATUS 2xx=.. 4xx=.. 5xx=.. other=.." and
-- "RESULT <accepted/s> <p50 ms> <p99 ms>".
local key = os.getenv("KEY") or ""
local form = os.getenv("FORM") or "contact"
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
  local body = string.format('{"data":{"name":"%s","email":"u%d@example.test","message":"%s %s %s"}}',
    word(), math.random(1, 1000000), word(), word(), word())
  return wrk.format("POST", "/forms/forms/" .. form .. "/submit",
    {["Content-Type"] = "application/json", ["X-API-Key"] = key}, body)
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
