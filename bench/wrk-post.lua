-- wrk script of bench/wrk-load.ts: POSTs the body in WRK_BODY_FILE with the key in WRK_KEY, and
-- prints one JSON line of what the run counted. No response() callback: wrk would then hand every
-- body to Lua; it counts answers that are not 2xx or 3xx itself.
local file = assert(io.open(os.getenv("WRK_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WRK_KEY")

done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"durationUs":%d,"status":%d,"socket":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, errors.status, errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
