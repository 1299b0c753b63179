#!/usr/bin/env bash
# bench/run.sh: end-to-end HTTP throughput and latency of the Token Vault
# server, next to the net/http floor on the same machine.
#
#   bash bench/run.sh                   # 5 s per run
#   DURATION=10s bash bench/run.sh      # longer, steadier runs
#   ROUNDS=3 bash bench/run.sh          # every run 3 times, interleaved
#
# It builds cmd/tokenvault, examples/loadgen and bench/floor into a
# temporary directory, starts the server there on a fresh data directory
# (bbolt, durable commits) and a free loopback port, with its per-key and
# per-tenant rate limits off (the defaults, 20000 and 100000 requests a
# second, are within a fast machine's reach at concurrency 64: the
# benchmark measures the vault, not its limits), waits for its
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
# and the same four against bench/bound (the floor plus the durable bbolt
# writes of each request, no vault), tokenize, card and get at concurrency
# 64 and batch at 4: the most a vault writing what this one writes can reach
# here, so the targets' reach on this machine is in the table.
#
# each for DURATION after a 1 s warm-up, prints each loadgen line to stderr
# as it goes, and finally a markdown table on stdout (see bench/README.md).
# With ROUNDS=n (1 by default) the whole sequence runs n times, so that
# the floor is measured beside each round's vault runs; the table then
# holds the median of each figure over the rounds (the lower middle one
# for an even count; errors and refusals: their sum), and each ratio is the
# median of the rounds' ratios, with their range. The table counts refusals
# (429: a rate limit) apart from errors (any other failure); the script
# warns on stderr when there were any, since the rows that had them
# measured a limit rather than the vault.
# The servers are stopped by PID and the directory removed on exit.
# Needs bash, go and curl; the server's log is kept in the temporary
# directory and shown only if it fails to start.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-1}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 1; }
concurrencies=(1 16 64)
batch_concurrencies=(1 4)

command -v curl >/dev/null || { echo "bench/run.sh needs curl" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tokenvault-bench.XXXXXX")
server_pid=
floor_pid=
bound_pid=
cleanup() {
  local pid
  for pid in $bound_pid $floor_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
source bench/lib.sh # the script has cd-ed to the repository root

echo "building into $tmp" >&2
go build -o "$tmp/server" ./cmd/tokenvault
go build -o "$tmp/loadgen" ./examples/loadgen
go build -o "$tmp/floor" ./bench/floor
go build -o "$tmp/bound" ./bench/bound

port=$(free_port)
# The rate limits (internal/cli/config.go) set explicitly: 0 is no limit.
# The load uses one application key and no sessions, and authenticates.
"$tmp/server" -data "$tmp/data" -addr "127.0.0.1:$port" \
  -rate-per-key 0 -rate-per-tenant 0 >"$tmp/server.log" 2>&1 &
server_pid=$!
wait_for "$server_pid" "$port" "$tmp/data/management.key" "$tmp/server.log"
base=http://127.0.0.1:$port

floor_port=$(free_port "$port")
"$tmp/floor" -addr "127.0.0.1:$floor_port" >"$tmp/floor.log" 2>&1 &
floor_pid=$!
wait_for "$floor_pid" "$floor_port" "" "$tmp/floor.log"
floor=http://127.0.0.1:$floor_port

bound_port=$(free_port "$floor_port")
"$tmp/bound" -data "$tmp/bound-data" -addr "127.0.0.1:$bound_port" >"$tmp/bound.log" 2>&1 &
bound_pid=$!
wait_for "$bound_pid" "$bound_port" "" "$tmp/bound.log"
bound=http://127.0.0.1:$bound_port

management_key=$(tr -d '[:space:]' <"$tmp/data/management.key")
app=$(curl -sS -X POST "$base/applications" \
  -H "SVC-API-KEY: $management_key" -H 'Content-Type: application/json' \
  -d '{"name":"bench","type":"private","permissions":["token:create","token:read"]}')
key=$(sed -n 's/.*"key":"\([^"]*\)".*/\1/p' <<<"$app")
if [[ -z $key ]]; then
  echo "creating the bench application failed: $app" >&2
  exit 1
fi

echo "server $base, floor $floor, bound $bound, $DURATION per run, $ROUNDS round(s), $(nproc) CPUs, $(go env GOVERSION)" >&2

# load NAME C URL [FLAGS...] runs loadgen in mode NAME (bound-MODE: MODE
# against the bound), echoes its line to stderr and stores it in
# results[NAME/C/ROUND].
declare -A results
round=1
load() {
  local name=$1 c=$2 url=$3
  shift 3
  local line
  line=$("$tmp/loadgen" -url "$url" -key "$key" -mode "${name#bound-}" -c "$c" -d "$DURATION" "$@")
  echo "$name: $line" >&2
  results[$name/$c/$round]=$line
}

for ((round = 1; round <= ROUNDS; round++)); do
  ((ROUNDS == 1)) || echo "round $round of $ROUNDS" >&2
  for c in "${concurrencies[@]}"; do load empty "$c" "$floor" -path /health; done
  for c in "${concurrencies[@]}"; do load tokenize "$c" "$base"; done
  for c in "${concurrencies[@]}"; do load card "$c" "$base"; done
  for c in "${concurrencies[@]}"; do load get "$c" "$base"; done
  for c in "${batch_concurrencies[@]}"; do load batch "$c" "$base" -batch 1000; done
  for mode in tokenize card get; do load "bound-$mode" 64 "$bound"; done
  load bound-batch 4 "$bound" -batch 1000
done

# median prints the median of its arguments: plain numbers, or Go
# durations as loadgen prints them (950µs, 12.5ms, 1m5s), compared by their
# length in seconds (one run's latencies may be in ms, the next's in µs).
median() {
  printf '%s\n' "$@" | awk '
    function seconds(v,   s, n, u) {
      s = 0
      while (match(v, /^[0-9.]+(ns|µs|us|ms|s|m|h)?/)) {
        n = substr(v, 1, RLENGTH); v = substr(v, RLENGTH + 1)
        u = n; sub(/^[0-9.]+/, "", u); n += 0
        s += (u == "ns") ? n / 1e9 : (u == "µs" || u == "us") ? n / 1e6 : (u == "ms") ? n / 1e3 : (u == "m") ? n * 60 : (u == "h") ? n * 3600 : n
      }
      return s
    }
    { k[NR] = seconds($0); orig[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (k[j] < k[i]) { t = k[i]; k[i] = k[j]; k[j] = t; t = orig[i]; orig[i] = orig[j]; orig[j] = t }
      print orig[int((NR + 1) / 2)]
    }'
}

# ratio DIVIDEND DIVISOR prints their quotient with three decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

# spread R... prints the median of the ratios R, followed by their range
# when there are several rounds; — when there are none.
spread() {
  (($# > 0)) || { echo —; return; }
  local m
  m=$(median "$@")
  ((ROUNDS == 1)) || m="$m ($(printf '%s\n' "$@" | sort -n | head -1)–$(printf '%s\n' "$@" | sort -n | tail -1))"
  echo "$m"
}

# row NAME C prints one table row: one round's figures, or the medians.
# Its ratio to the bound compares its req/s with the
# bound's in the same round, where the bound ran NAME at C.
row() {
  local name=$1 c=$2 r rps=() p50=() p99=() ratios=() bounds=() tokens=() errors=0 refused=0 line other
  local mode=${name#bound-}
  for ((r = 1; r <= ROUNDS; r++)); do
    line=${results[$name/$c/$r]}
    rps+=("$(field req/s "$line")")
    p50+=("$(field p50 "$line")")
    p99+=("$(field p99 "$line")")
    errors=$((errors + $(field errors "$line")))
    refused=$((refused + $(field refused "$line")))
    if [[ $mode == tokenize || $mode == card || $mode == get ]]; then
      ratios+=("$(ratio "${rps[-1]}" "$(field req/s "${results[empty/$c/$r]}")")")
    fi
    [[ $mode != batch ]] || tokens+=("$(field tokens/s "$line")")
    other=${results[bound-$name/$c/$r]:-}
    if [[ -n $other ]]; then
      bounds+=("$(ratio "$(field req/s "$line")" "$(field req/s "$other")")")
    fi
  done
  local tok=—
  ((${#tokens[@]} == 0)) || tok=$(median "${tokens[@]}")
  total_refused=$((total_refused + refused))
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$c" "$(median "${rps[@]}")" \
    "$(median "${p50[@]}")" "$(median "${p99[@]}")" "$errors" "$refused" "$(spread "${ratios[@]}")" \
    "$(spread "${bounds[@]}")" "$tok"
}

total_refused=0
echo
echo "| mode | concurrency | req/s | p50 | p99 | errors | refused | ratio to floor | ratio to bound | tokens/s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for mode in empty tokenize card get; do
  for c in "${concurrencies[@]}"; do row "$mode" "$c"; done
done
for c in "${batch_concurrencies[@]}"; do row batch "$c"; done
for mode in tokenize card get; do row "bound-$mode" 64; done
row bound-batch 4
if ((total_refused > 0)); then
  echo "warning: $total_refused requests were refused with 429 (a rate limit): the rows with refusals measure that limit, not the vault" >&2
fi
