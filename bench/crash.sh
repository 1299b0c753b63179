#!/usr/bin/env bash
# bench/crash.sh: crash safety of the Token Vault server on bbolt. Every
# token the server acknowledged (201 with its id) must survive a kill -9, and
# so must the audit line of every read it answered (200).
#
#   bash bench/crash.sh                 # 5 kills, 16 concurrent writers
#   KILLS=20 WORKERS=64 bash bench/crash.sh
#
# It builds cmd/tokenvault and bench/crashload into a temporary directory
# and starts the server on a data directory there and a free loopback port.
# On the first start it creates a private application "crash" with the
# management key (<data>/management.key) whose rule reveals the data of
# tokens it reads (token:create, token:read), so that the check can compare
# values. Then, KILLS times:
#
#   1. crashload drives WORKERS concurrent POST /tokenize {"v": "<unique
#      value>"} and appends "<id>\t<value>" to the round's ack file only
#      after a 201 with the id (fsynced); then reads each token back (GET
#      /tokens/{id}) and acknowledges a 200 the same way;
#   2. after a random 0.5-2 s the server is killed with kill -9 mid-load,
#      and the driver is stopped;
#   3. the server is restarted on the same data directory (on a fresh free
#      port): it must start, so the bbolt file opens;
#   4. crashload -verify counts, with the management key, the read lines
#      of every token with acknowledged reads (GET /logs by entity): the
#      reads' lines are appended to the store's append log, not committed,
#      so this checks its replay; then GETs every acknowledged id of the
#      round and compares the token's data with the value.
#
# Finally every acknowledged id of every round is verified again against the
# last restart, and the server is stopped with SIGTERM and must exit 0.
# It prints per round and in total: acknowledged, verified, lost (and
# reads, unlogged), and exits non-zero if any acknowledged token is lost,
# any acknowledged read has no line (or the server fails to start).
# The server is killed and the directory removed on exit (KEEP=1 keeps the
# directory, logs and ack files included, for a post-mortem).
# Needs bash, go and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

KILLS=${KILLS:-5}
WORKERS=${WORKERS:-16}

command -v curl >/dev/null || { echo "bench/crash.sh needs curl" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tokenvault-crash.XXXXXX")
server_pid=
load_pid=
cleanup() {
  local pid
  for pid in $load_pid $server_pid; do
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ ${KEEP:-} == 1 ]]; then
    echo "kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
source bench/lib.sh # the script has cd-ed to the repository root

now_ms() { date +%s%3N; }

# start_server starts the server on the data directory and a free port, sets
# server_pid and base, and waits up to 30 s until it answers HTTP (and, on
# the first start, has written the management key). The log of start $1 is
# $tmp/server.$1.log.
start_server() {
  local log=$tmp/server.$1.log port i code
  port=$(free_port)
  "$tmp/server" -data "$tmp/data" -addr "127.0.0.1:$port" >"$log" 2>&1 &
  server_pid=$!
  base=http://127.0.0.1:$port
  for ((i = 0; i < 300; i++)); do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "the server did not start (start $1); its log:" >&2
      cat "$log" >&2
      return 1
    fi
    if [[ -s $tmp/data/management.key ]]; then
      code=$(curl -s -o /dev/null -w '%{http_code}' "$base/applications/key" || true)
      if [[ $code != 000 ]]; then
        return 0
      fi
    fi
    sleep 0.1
  done
  echo "the server did not answer in 30 s (start $1); its log:" >&2
  cat "$log" >&2
  return 1
}


echo "building into $tmp" >&2
go build -o "$tmp/server" ./cmd/tokenvault
go build -o "$tmp/crashload" ./bench/crashload

start_server 0
management_key=$(tr -d '[:space:]' <"$tmp/data/management.key")
app=$(curl -sS -X POST "$base/applications" \
  -H "SVC-API-KEY: $management_key" -H 'Content-Type: application/json' \
  -d '{"name":"crash","type":"private","rules":[{"priority":1,"container":"/","transform":"reveal","permissions":["token:create","token:read"]}]}')
key=$(sed -n 's/.*"key":"\([^"]*\)".*/\1/p' <<<"$app")
if [[ -z $key ]]; then
  echo "creating the crash application failed: $app" >&2
  exit 1
fi

echo "$KILLS kills, $WORKERS workers, $(nproc) CPUs, $(go env GOVERSION)" >&2
total_acked=0 total_verified=0 total_lost=0 total_reads=0 total_unlogged=0 failed=0
for ((round = 1; round <= KILLS; round++)); do
  ack=$tmp/ack.$round
  "$tmp/crashload" -url "$base" -key "$key" -c "$WORKERS" -ack "$ack" -prefix "r$round" \
    >"$tmp/load.$round.out" 2>"$tmp/load.$round.err" &
  load_pid=$!
  ms=$((500 + RANDOM % 1501))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"

  kill -9 "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
  kill -TERM "$load_pid"
  if ! wait "$load_pid"; then
    echo "round $round: the driver failed:" >&2
    cat "$tmp/load.$round.err" >&2
    exit 1
  fi
  load_pid=
  load=$(cat "$tmp/load.$round.out")

  t0=$(now_ms)
  start_server "$round"
  restart_ms=$(($(now_ms) - t0))

  t0=$(now_ms)
  verify=$("$tmp/crashload" -url "$base" -key "$key" -log-key "$management_key" -c "$WORKERS" -verify "$ack" 2>"$tmp/verify.$round.err") || true
  verify_ms=$(($(now_ms) - t0))
  acked=$(field acknowledged "$verify")
  verified=$(field verified "$verify")
  lost=$(field lost "$verify")
  reads=$(field reads "$verify")
  unlogged=$(field unlogged "$verify")
  if [[ -z $acked || -z $verified || -z $lost || -z $reads || -z $unlogged ]]; then
    echo "round $round: the verifier failed:" >&2
    cat "$tmp/verify.$round.err" >&2
    exit 1
  fi
  printf 'round %d: killed after %d ms: acknowledged %d, verified %d, lost %d; reads %d, unlogged %d (unacknowledged %s, bad status %s; restart %d ms, verify %d ms)\n' \
    "$round" "$ms" "$acked" "$verified" "$lost" "$reads" "$unlogged" "$(field unacknowledged "$load")" "$(field bad_status "$load")" "$restart_ms" "$verify_ms"
  if [[ $lost != 0 || $unlogged != 0 ]]; then
    sed 's/^/  /' "$tmp/verify.$round.err"
    failed=1
  fi
  if [[ $acked == 0 ]]; then
    echo "round $round: no request was acknowledged before the kill" >&2
    failed=1
  fi
  total_acked=$((total_acked + acked))
  total_verified=$((total_verified + verified))
  total_lost=$((total_lost + lost))
  total_reads=$((total_reads + reads))
  total_unlogged=$((total_unlogged + unlogged))
done

# Every round's tokens again, after the last crash and restart.
cat "$tmp"/ack.* >"$tmp/ack.all"
final=$("$tmp/crashload" -url "$base" -key "$key" -c "$WORKERS" -verify "$tmp/ack.all" 2>"$tmp/verify.all.err") || true
if [[ -z $(field lost "$final") ]]; then
  echo "final verification failed:" >&2
  cat "$tmp/verify.all.err" >&2
  exit 1
fi
printf 'all rounds after the last restart: acknowledged %d, verified %d, lost %d\n' \
  "$(field acknowledged "$final")" "$(field verified "$final")" "$(field lost "$final")"
if [[ $(field lost "$final") != 0 ]]; then
  sed 's/^/  /' "$tmp/verify.all.err"
  failed=1
fi

# A graceful stop closes the store cleanly.
kill -TERM "$server_pid"
if ! wait "$server_pid"; then
  echo "the server did not exit cleanly on SIGTERM; its log:" >&2
  tail -20 "$tmp/server.$KILLS.log" >&2
  failed=1
fi
server_pid=

printf 'total: %d kills, acknowledged %d, verified %d, lost %d; reads %d, unlogged %d\n' "$KILLS" "$total_acked" "$total_verified" "$total_lost" "$total_reads" "$total_unlogged"
if [[ $failed != 0 || $total_lost != 0 || $total_unlogged != 0 ]]; then
  echo "FAIL" >&2
  exit 1
fi
echo "ok: no acknowledged token or read line was lost" >&2
