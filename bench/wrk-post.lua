-- wrk script of bench/wrk-load.ts: POSTs the body in WRK_BODY_FILE with the key in WRK_KEY, and
-- prints one JSON line of what the run counted, with the first answer that was not a 200 (its
-- status and the start of its body) to say why requests failed.
local file = assert(io.open(os.getenv("WRK_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WRK_KEY")

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failed = ""
end

function response(status, headers, body)
  if status ~= 200 and failed == "" then
    failed = status .. " " .. string.sub(body or "", 1, 300)
  end
end

done = function(summary, latency, requests)
  local errors = summary.errors
  local sample = ""
  for _, thread in ipairs(threads) do
    local failed = thread:get("failed")
    if sample == "" and failed and failed ~= "" then sample = failed end
  end
  sample = string.gsub(sample, '[%c"\\]', " ")
  io.write(string.format(
    'WRK {"requests":%d,"durationUs":%d,"status":%d,"socket":%d,"p50Us":%d,"p99Us":%d,"sample":"%s"}\n',
    summary.requests, summary.duration, errors.status, errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(99), sample))
end
