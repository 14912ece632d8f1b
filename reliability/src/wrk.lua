-- Prints the run's figures as one JSON line for the reliability scenarios to
-- read. With WRK_COUNT_NODES set, also counts the nodes of every 2xx graph
-- answer (one `"version":"` per node; an engine's top-level version is a
-- number): wrk then keeps every body and the Lua scan of 171 KB answers
-- costs more CPU than the server spends on them, so loads that need only
-- latency leave it unset.
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    smallest = -1
    largest = -1
    non2xx = 0
end

if os.getenv("WRK_COUNT_NODES") then
    function response(status, headers, body)
        if status < 200 or status > 299 then
            non2xx = non2xx + 1
            return
        end
        local _, nodes = string.gsub(body, '"version":"', '')
        if smallest < 0 or nodes < smallest then smallest = nodes end
        if nodes > largest then largest = nodes end
    end
end

function done(summary, latency, requests)
    local smallest, largest, non2xx = -1, -1, 0
    for _, thread in ipairs(threads) do
        local s, l = thread:get("smallest"), thread:get("largest")
        if s >= 0 and (smallest < 0 or s < smallest) then smallest = s end
        if l > largest then largest = l end
        non2xx = non2xx + thread:get("non2xx")
    end
    -- Without the response callback, wrk's own count.
    if not os.getenv("WRK_COUNT_NODES") then non2xx = summary.errors.status end
    local errors = summary.errors
    io.write(string.format(
        'WRK-RESULT {"requests":%d,"non_2xx":%d,"connect_errors":%d,"read_errors":%d,' ..
        '"write_errors":%d,"timeouts":%d,"p50_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,' ..
        '"smallest_nodes":%d,"largest_nodes":%d,"seconds":%.3f}\n',
        summary.requests, non2xx, errors.connect, errors.read, errors.write, errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
        smallest, largest, summary.duration / 1e6))
end
