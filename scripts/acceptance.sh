#!/usr/bin/env bash
# iotbench measured against an independent server whose truth is known (see `make acceptance`).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
stub_pid=""
cleanup() { [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

last=$(( $(nproc) - 1 ))
start_stub() {
  taskset -c "$last" bin/stubserver -addr 127.0.0.1:18999 -delay 50ms -fail-percent "$1" &
  stub_pid=$!
  sleep 0.5
}

echo "== fixed 50 ms server, 2000 rps open loop, 20 s (generator on CPUs 0-$((last - 1)), server on $last)"
start_stub 0
taskset -c "0-$((last - 1))" bin/iotbench run --url http://127.0.0.1:18999/ingest --method POST \
  --body-file payloads/iot-reading.json --header Content-Type:application/json \
  --rate 2000 --duration 20s --warmup 2s --expected-latency 50ms --contains processingMs --out "$out/fixed"
status=$?
kill "$stub_pid"; wait "$stub_pid" 2>/dev/null
awk -F, 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { a = $col["achieved_rps"] / $col["requested_rps"]; p50 = $col["latency_p50_ms"]; p99 = $col["latency_p99_ms"]
    printf "achieved %.2f%% of requested; p50 %.3f ms (|p50-50| %.3f); p99 %.3f ms (p99-50 %.3f)\n", 100*a, p50, p50-50, p99, p99-50
    ok = a >= 0.995 && p50 - 50 <= 1.5 && 50 - p50 <= 1.5 && p99 - 50 <= 5
    print (ok ? "PASS" : "FAIL") ": achieved >= 99.5%, p50 within 1.5 ms, p99 within 5 ms"; exit !ok }' "$out"/fixed/*.csv
fixed_ok=$?

echo "== server failing 30% of requests, 500 rps, 10 s"
start_stub 30
taskset -c "0-$((last - 1))" bin/iotbench run --url http://127.0.0.1:18999/ingest --rate 500 --duration 10s \
  --expected-latency 50ms --contains processingMs --out "$out/failing"
fail_status=$?
awk -F, -v status="$fail_status" 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { r = $col["success_ratio"]; printf "success ratio %.4f, valid=%s, exit status %d\n", r, $col["valid"], status
    ok = r > 0.68 && r < 0.72 && $col["valid"] == "false" && status == 1
    print (ok ? "PASS" : "FAIL") ": success ratio ~0.70, cell invalid, exit 1"; exit !ok }' "$out"/failing/*.csv
failing_ok=$?
[ "$status" -eq 0 ] && [ "$fixed_ok" -eq 0 ] && [ "$failing_ok" -eq 0 ]
