-- wrk script for the cross-check of ffb-rest-load (bench/rest/README.md):
-- two of PostgREST's k6 scenarios on the Chinook-shaped database, chosen
-- by the argument after "--":
--   wrk -t1 -c16 -d10s -s bench/rest/wrk/k6.lua http://127.0.0.1:3000 -- GETSingle
--   GETSingle       GET /artist?select=*&artist_id=eq.{1..275}             -> 200, one row
--   GETSingleEmbed  GET /album?select=*,track(*,genre(*))&artist_id=eq.{1..347} -> 200, an array
-- Every answer is checked (status and the start of the body) in the
-- thread; done() prints TSV lines "wrk <key> <value>" (errors = wrong
-- answers + socket errors).
local scenarios = {
  GETSingle = { n = 275, prefix = '[{"artist_id":',
                path = "/artist?select=*&artist_id=eq." },
  GETSingleEmbed = { n = 347, prefix = "[",
                     path = "/album?select=*,track(*,genre(*))&artist_id=eq." },
}
local threads = {}
local sc

setup = function(thread) table.insert(threads, thread) end

init = function(args)
  sc = scenarios[args[1] or "GETSingle"]
  if not sc then error("unknown scenario " .. tostring(args[1])) end
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  bad = 0
end

request = function()
  return wrk.format("GET", sc.path .. math.random(1, sc.n))
end

response = function(status, headers, body)
  if status ~= 200 or body:sub(1, #sc.prefix) ~= sc.prefix then
    bad = bad + 1
  end
end

done = function(summary, latency, requests)
  local nbad = 0
  for _, t in ipairs(threads) do nbad = nbad + (t:get("bad") or 0) end
  local e = summary.errors
  io.write(string.format("wrk\treq_s\t%.1f\n",
    summary.requests / (summary.duration / 1e6)))
  for _, p in ipairs({ 50, 95, 99 }) do
    io.write(string.format("wrk\tp%d_ms\t%.3f\n", p, latency:percentile(p) / 1000))
  end
  io.write(string.format("wrk\terrors\t%d\n",
    nbad + e.connect + e.read + e.write + e.timeout + e.status))
end
