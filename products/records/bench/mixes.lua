-- wrk script: the recordsbench mixes against a running gatehouse serve, every request with
-- new values. MIX (a|b|c|d|e) and N (records in the data folder) come from the environment.
local mix = os.getenv("MIX") or "a"
local n = tonumber(os.getenv("N") or "100000")
local base = "/records/projects/bench/collections/posts"
local syl = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe"}

-- word is recordsbench's word(i): four syllables picked by i in base 12.
local function word(i)
  local s = ""
  for _ = 1, 4 do
    s = s .. syl[(i % 12) + 1]
    i = math.floor(i / 12)
  end
  return s
end

function setup(thread)
  thread:set("id", math.random(1, 1000000))
end

function init(args)
  math.randomseed(id)
end

request = function()
  local path
  if mix == "a" then
    path = string.format("%s/records?filter=category:eq:c%d&filter=views:gte:%d&sort=-views&limit=25",
      base, math.random(0, 9), math.random(0, n - 1))
  elseif mix == "b" then
    path = string.format("%s/records?q=%s&limit=25", base, string.sub(word(math.random(0, 1999)), 1, 6))
  elseif mix == "c" then
    path = string.format("%s/records?filter=category:eq:c%d&filter=views:lte:%d&sort=-views&populate=*&limit=25",
      base, math.random(0, 9), math.random(0, n - 1))
  elseif mix == "d" then
    path = string.format("%s/aggregate?groupBy=tags&filter=category:eq:c%d&filter=views:gte:%d",
      base, math.random(0, 9), n - math.random(0, math.floor(n / 10) - 1))
  else
    path = string.format("%s/aggregate?groupBy=%s", base, ({"tags", "category"})[math.random(1, 2)])
  end
  return wrk.format("GET", path, {["X-API-Key"] = "pk_live_bench_web"})
end
