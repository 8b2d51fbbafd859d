-- wrk script of compare.sh (make bench-records-pocketbase): the same question asked of Gatehouse
-- and of PocketBase v0.40.4 over the same records (recordsbench's NDJSON, imported into both),
-- every request with new values. TARGET (gatehouse|pocketbase), MIX, N (posts) and TOKEN (the
-- admin token, or PocketBase's superuser token, for the creates) come from the environment.
-- The mixes, in the lettering of issue #27:
--   (a) a list filtered by category and a views range, sorted by views, 25 a page
--   (b) a title search, 25 a page (Gatehouse: q, its word-prefix index; PocketBase: title~,
--       its LIKE, the only text search it has)
--   (c) (a) with each post's author populated (populate=author / expand=author)
--   (d) one post by id
--   (e) the posts counted by category or by tag (Gatehouse: aggregate; PocketBase: its view
--       collections posts_by_category and posts_by_tag, pbload.go)
--   (f) creates of a new post (Gatehouse: admin API, durable; PocketBase: superuser create)
local target = os.getenv("TARGET") or "gatehouse"
local mix = os.getenv("MIX") or "a"
local n = tonumber(os.getenv("N") or "100000")
local token = os.getenv("TOKEN") or ""
local gh = "/records/projects/bench/collections/posts"
local pb = "/api/collections/posts/records"
local syl = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe"}
local threads = {}

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
  thread:set("seed", math.random(1, 1000000000))
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(seed)
  ok, bad = 0, 0
end

local function get(path)
  if target == "pocketbase" then
    return wrk.format("GET", path)
  end
  return wrk.format("GET", path, {["X-API-Key"] = "pk_live_bench_web"})
end

request = function()
  local cat, views = math.random(0, 9), math.random(0, n - 1)
  if mix == "a" or mix == "c" then
    if target == "pocketbase" then
      return get(string.format("%s?filter=(category='c%d'%%26%%26views>=%d)&sort=-views&perPage=25&skipTotal=1%s",
        pb, cat, views, mix == "c" and "&expand=author" or ""))
    end
    return get(string.format("%s/records?filter=category:eq:c%d&filter=views:gte:%d&sort=-views&limit=25%s",
      gh, cat, views, mix == "c" and "&populate=author" or ""))
  elseif mix == "b" then
    local w = string.sub(word(math.random(0, 1999)), 1, 6)
    if target == "pocketbase" then
      return get(string.format("%s?filter=(title~'%s')&perPage=25&skipTotal=1", pb, w))
    end
    return get(string.format("%s/records?q=%s&limit=25", gh, w))
  elseif mix == "d" then
    local id = string.format("p-%07d", math.random(0, n - 1))
    if target == "pocketbase" then
      return get(string.format("%s/%s", pb, id))
    end
    return get(string.format("%s/records/%s", gh, id))
  elseif mix == "e" then
    local by = ({"category", "tags"})[math.random(1, 2)]
    if target == "pocketbase" then
      return get(by == "tags" and "/api/collections/posts_by_tag/records?perPage=50" or
        "/api/collections/posts_by_category/records?perPage=50")
    end
    return get(string.format("%s/aggregate?groupBy=%s", gh, by))
  end
  local data = string.format('{"title":"%s %s","category":"c%d","tags":["t%d"],"views":%d,"day":"2026-0%d-1%d"}',
    word(math.random(0, 20735)), word(math.random(0, 20735)), cat, math.random(0, 7), views,
    math.random(1, 9), math.random(0, 9))
  if target == "pocketbase" then
    return wrk.format("POST", pb, {["Content-Type"] = "application/json", ["Authorization"] = token}, data)
  end
  return wrk.format("POST", "/admin/v1/projects/bench/collections/posts/records",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, '{"data":' .. data .. '}')
end

response = function(status, headers, body)
  if status >= 200 and status < 300 then ok = ok + 1 else bad = bad + 1 end
end

done = function(summary, latency, requests)
  local a, b = 0, 0
  for _, t in ipairs(threads) do
    a, b = a + t:get("ok"), b + t:get("bad")
  end
  io.write(string.format("RESULT %.0f %.2f %.2f %d\n", a / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, b))
end
