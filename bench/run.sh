#!/usr/bin/env bash
# bench/run.sh: end-to-end HTTP throughput and latency of the Token Vault
# server, next to the net/http floor on the same machine.
#
#   bash bench/run.sh                   # 5 s per run
#   DURATION=10s bash bench/run.sh      # longer, steadier runs
#
# It builds cmd/tokenvault, examples/loadgen and bench/floor into a
# temporary directory, starts the server there on a fresh data directory
# (bbolt, durable commits) and a free loopback port, waits for its
# management key, creates a private application "bench" (token:create,
# token:read) with it, and starts the floor server (GET /health, nothing
# else) on a second free port. Then it runs examples/loadgen:
#
#   empty     against the floor          at concurrency 1, 16, 64
#   tokenize  POST /tokenize, one value  at concurrency 1, 16, 64
#   card      POST /tokenize, one card   at concurrency 1, 16, 64
#   get       GET /tokens/{id}           at concurrency 1, 16, 64
#   batch     POST /tokenize, 1000 values at concurrency 1, 4
#
# each for DURATION after a 1 s warm-up, prints each loadgen line to stderr
# as it goes, and finally a markdown table on stdout (see bench/README.md).
# Both servers are stopped by PID and the directory removed on exit.
# Needs bash, go and curl; the server's log is kept in the temporary
# directory and shown only if it fails to start.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5s}
concurrencies=(1 16 64)
batch_concurrencies=(1 4)

command -v curl >/dev/null || { echo "bench/run.sh needs curl" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tokenvault-bench.XXXXXX")
server_pid=
floor_pid=
cleanup() {
  local pid
  for pid in $floor_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
source bench/lib.sh # the script has cd-ed to the repository root

# wait_for waits up to 30 s for the process $1 to answer on port $2 and,
# when $3 is given, for the file $3 to exist; $4 is the process's log.
wait_for() {
  local pid=$1 port=$2 file=${3:-} log=$4 i
  for ((i = 0; i < 300; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the server on port $port exited; its log:" >&2
      cat "$log" >&2
      return 1
    fi
    if [[ -z $file || -s $file ]] && ! port_free "$port"; then
      return 0
    fi
    sleep 0.1
  done
  echo "the server on port $port did not start in 30 s; its log:" >&2
  cat "$log" >&2
  return 1
}

echo "building into $tmp" >&2
go build -o "$tmp/server" ./cmd/tokenvault
go build -o "$tmp/loadgen" ./examples/loadgen
go build -o "$tmp/floor" ./bench/floor

port=$(free_port)
"$tmp/server" -data "$tmp/data" -addr "127.0.0.1:$port" >"$tmp/server.log" 2>&1 &
server_pid=$!
wait_for "$server_pid" "$port" "$tmp/data/management.key" "$tmp/server.log"
base=http://127.0.0.1:$port

floor_port=$(free_port "$port")
"$tmp/floor" -addr "127.0.0.1:$floor_port" >"$tmp/floor.log" 2>&1 &
floor_pid=$!
wait_for "$floor_pid" "$floor_port" "" "$tmp/floor.log"
floor=http://127.0.0.1:$floor_port

management_key=$(tr -d '[:space:]' <"$tmp/data/management.key")
app=$(curl -sS -X POST "$base/applications" \
  -H "SVC-API-KEY: $management_key" -H 'Content-Type: application/json' \
  -d '{"name":"bench","type":"private","permissions":["token:create","token:read"]}')
key=$(sed -n 's/.*"key":"\([^"]*\)".*/\1/p' <<<"$app")
if [[ -z $key ]]; then
  echo "creating the bench application failed: $app" >&2
  exit 1
fi

echo "server $base, floor $floor, $DURATION per run, $(nproc) CPUs, $(go env GOVERSION)" >&2

# load MODE C URL [FLAGS...] runs loadgen, echoes its line to stderr and
# stores it in results[MODE/C].
declare -A results
load() {
  local mode=$1 c=$2 url=$3
  shift 3
  local line
  line=$("$tmp/loadgen" -url "$url" -key "$key" -mode "$mode" -c "$c" -d "$DURATION" "$@")
  echo "$line" >&2
  results[$mode/$c]=$line
}


for c in "${concurrencies[@]}"; do load empty "$c" "$floor" -path /health; done
for c in "${concurrencies[@]}"; do load tokenize "$c" "$base"; done
for c in "${concurrencies[@]}"; do load card "$c" "$base"; done
for c in "${concurrencies[@]}"; do load get "$c" "$base"; done
for c in "${batch_concurrencies[@]}"; do load batch "$c" "$base" -batch 1000; done

# row MODE C prints one table row.
row() {
  local line=${results[$1/$2]} ratio=— tokens=—
  local rps
  rps=$(field req/s "$line")
  if [[ $1 == tokenize || $1 == card || $1 == get ]]; then
    ratio=$(awk -v a="$rps" -v b="$(field req/s "${results[empty/$2]}")" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
  fi
  if [[ $1 == batch ]]; then
    tokens=$(field tokens/s "$line")
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$rps" \
    "$(field p50 "$line")" "$(field p99 "$line")" "$(field errors "$line")" "$ratio" "$tokens"
}

echo
echo "| mode | concurrency | req/s | p50 | p99 | errors | ratio to floor | tokens/s |"
echo "|---|---|---|---|---|---|---|---|"
for mode in empty tokenize card get; do
  for c in "${concurrencies[@]}"; do row "$mode" "$c"; done
done
for c in "${batch_concurrencies[@]}"; do row batch "$c"; done
