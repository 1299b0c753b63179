#!/usr/bin/env bash
# bench/import.sh: `tokenvault import` of generated card tokens into a
# running server on bbolt (durable commits), the whole path: the file
# read and parsed by the command, batches of 1,000 over HTTP, each
# validated and committed in one transaction by the server.
#
#   bash bench/import.sh                 # 100,000 tokens
#   N=1000000 bash bench/import.sh       # a million
#   N=1000000 TIMEOUT=20m bash bench/import.sh   # stop after 20 minutes
#
# It builds cmd/tokenvault and bench/importgen into a temporary
# directory, generates N card tokens in the exchange format (NDJSON, ids
# UUIDs, created_at kept), starts the server on a fresh data directory and
# a free loopback port (rate limits off), creates a private application
# with token:import and token:create, and runs the import under
# /usr/bin/time. It prints the command's JSON summary, records/s, the
# peak RSS of the import command and of the server, and the data file's
# size, and the records/s of each tenth of the run (from the command's
# state file, sampled every 5 s). With TIMEOUT the import is stopped
# (SIGTERM) after that long and the figures are those of the lines done.
# The server is stopped by PID and the directory removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tokenvault-import-bench.XXXXXX")
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
source bench/lib.sh

echo "building into $tmp" >&2
go build -o "$tmp/tokenvault" ./cmd/tokenvault
go build -o "$tmp/importgen" ./bench/importgen
"$tmp/importgen" -n "$N" >"$tmp/cards.ndjson"
echo "generated $N card tokens: $(stat -c %s "$tmp/cards.ndjson") bytes" >&2

port=$(free_port)
"$tmp/tokenvault" -data "$tmp/data" -addr "127.0.0.1:$port" \
  -rate-per-key 0 -rate-per-tenant 0 >"$tmp/server.log" 2>&1 &
server_pid=$!
wait_for "$server_pid" "$port" "$tmp/data/management.key" "$tmp/server.log"
base=http://127.0.0.1:$port
management_key=$(tr -d '[:space:]' <"$tmp/data/management.key")
app=$(curl -sS -X POST "$base/applications" \
  -H "SVC-API-KEY: $management_key" -H 'Content-Type: application/json' \
  -d '{"name":"importer","type":"private","permissions":["token:import","token:create"]}')
key=$(sed -n 's/.*"key":"\([^"]*\)".*/\1/p' <<<"$app")
[[ -n $key ]] || { echo "creating the application failed: $app" >&2; exit 1; }
printf '%s' "$key" >"$tmp/key"

state="$tmp/cards.ndjson.import-state"
(
  # The lines committed, every 5 s, from the state file the command
  # rewrites after each batch.
  while sleep 5; do
    line=$(sed -n 's/.*"line":\([0-9]*\).*/\1/p' "$state" 2>/dev/null || true)
    echo "$(date +%s) ${line:-0}"
  done
) >"$tmp/samples" &
sampler=$!
began=$(date +%s.%N)
set +e
summary=$(timeout -s TERM "${TIMEOUT:-0}" /usr/bin/time -f '%M' -o "$tmp/time" \
  "$tmp/tokenvault" import -server "$base" -key-file "$tmp/key" "$tmp/cards.ndjson")
status=$?
set -e
ended=$(date +%s.%N)
kill "$sampler" 2>/dev/null || true
import_rss_kib=$(tail -n 1 "$tmp/time")
server_rss_kib=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$server_pid/status")
if ((status == 0)); then
  echo "summary: $summary"
  done_lines=$N
  seconds=$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' <<<"$summary")
else
  done_lines=$(sed -n 's/.*"line":\([0-9]*\).*/\1/p' "$state")
  seconds=$(awk -v a="$began" -v b="$ended" 'BEGIN { print b - a }')
  echo "stopped after ${seconds}s (status $status) at line $done_lines of $N"
fi
echo "records/s by 5 s sample (time, lines):" >&2
awk 'NR > 1 && $2 > p { printf "  %ds %d lines %.0f/s\n", $1 - t0, $2, ($2 - p) / ($1 - t) } NR == 1 { t0 = $1 } { t = $1; p = $2 }' "$tmp/samples" >&2
awk -v n="$done_lines" -v s="$seconds" -v irss="$import_rss_kib" -v srss="$server_rss_kib" -v db="$(stat -c %s "$tmp/data/vault.db")" \
  'BEGIN { printf "N=%d: %.0f records/s; peak RSS: import %d MiB, server %d MiB; vault.db %d MiB\n", n, n / s, irss / 1024, srss / 1024, db / 1048576 }'
