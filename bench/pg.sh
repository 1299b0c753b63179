#!/usr/bin/env bash
# bench/pg.sh: the Token Vault server on PostgreSQL, one instance and two
# instances on one database, beside bbolt and the net/http floor, in one run.
#
#   bash bench/pg.sh                          # 3 rounds of 5 s
#   ROUNDS=1 DURATION=3s bash bench/pg.sh     # a quick look
#   PG_BIN=/usr/lib/postgresql/16/bin bash bench/pg.sh
#
# It starts its own throwaway PostgreSQL cluster (PG_BIN, by default
# PostgreSQL 15's, in a temporary directory, on a free loopback port) with
# fsync on and synchronous commits, as a production server has them: the
# figures are about commits. It builds cmd/tokenvault, examples/loadgen and
# bench/floor and starts, each on a fresh data directory and a free port,
# with the per-key and per-tenant rate limits off:
#
#   pg-one   one server on schema "one"
#   pg-two   two servers on schema "two": the second started after the
#            first, with the first's master key, so both serve the tenant
#            the first created; one application key for both
#   bolt     one server on a bbolt file (durable commits)
#   floor    bench/floor: GET /health and nothing else
#
# Then ROUNDS interleaved rounds (default 3), each running examples/loadgen
# for DURATION (default 5 s, after loadgen's 1 s warm-up) against: the
# floor (-mode empty, c=64); pg-one (-mode tokenize: POST /tokenize with one
# unique value a call, c=64); pg-two (two loadgens at once, c=32 against each
# server: 64 in all, their calls a second summed); bolt (tokenize, c=64).
# The servers live through every round, so later rounds run on a larger
# database, as a vault does.
#
# Serialization failures ("could not serialize access") and deadlocks
# ("deadlock detected") are counted from PostgreSQL's own log, over each
# PostgreSQL run (its warm-up included, so the share is an upper bound),
# as a share of the run's calls.
#
# It prints each loadgen line to stderr as it goes and finally a markdown
# table on stdout: calls a second per round, then the ratios (PG one / bolt,
# PG two / PG one, bolt / floor, and the last round over the first for
# each). Servers are stopped by PID, PostgreSQL with pg_ctl, and the
# directory removed on exit. Needs bash, go, curl and PostgreSQL's binaries;
# as root, PostgreSQL runs as the user postgres.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-3}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench/pg.sh needs curl" >&2; exit 1; }
[[ -x $PG_BIN/initdb ]] || { echo "PostgreSQL binaries not found in $PG_BIN (set PG_BIN)" >&2; exit 1; }

# shellcheck source=bench/lib.sh
source bench/lib.sh # port_free, free_port, field, wait_for

pg_as=()
if [[ $(id -u) == 0 ]]; then
  pg_as=(runuser -u postgres --) # PostgreSQL refuses to run as root
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tokenvault-pgbench.XXXXXX")
pids=()
pg_started=
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ -n $pg_started ]]; then
    "${pg_as[@]}" "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -m fast stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# PostgreSQL: a fresh cluster; a port taken between the check and the bind
# makes the start fail, and the next free port is tried.
mkdir "$tmp/pg"
if ((${#pg_as[@]} > 0)); then
  chmod 711 "$tmp" # postgres passes through; the keys beside are 0600
  chown postgres: "$tmp/pg"
fi
"${pg_as[@]}" "$PG_BIN/initdb" -D "$tmp/pg/data" -A trust -U postgres -E UTF8 >"$tmp/pg/initdb.log" 2>&1 ||
  { cat "$tmp/pg/initdb.log" >&2; exit 1; }
pg_log=$tmp/pg/server.log
pg_port=
for _ in 1 2 3 4 5; do
  port=$(free_port)
  if "${pg_as[@]}" "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -l "$pg_log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $tmp/pg -c max_connections=300 -c fsync=on -c synchronous_commit=on" \
    start >/dev/null; then
    pg_port=$port
    pg_started=1
    break
  fi
  grep -q "could not bind\|could not create any TCP/IP sockets" "$pg_log" || { cat "$pg_log" >&2; exit 1; }
done
[[ -n $pg_port ]] || { echo "PostgreSQL could not bind a port" >&2; exit 1; }
dsn="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"

echo "building into $tmp" >&2
go build -o "$tmp/server" ./cmd/tokenvault
go build -o "$tmp/loadgen" ./examples/loadgen
go build -o "$tmp/floor" ./bench/floor

# serve NAME [FLAGS...] starts a server on a free port with data directory
# $tmp/NAME, and sets port_NAME. The first start of a store writes
# <data>/management.key; a later instance on the same store does not.
declare -A ports
serve() {
  local name=$1 port log=$tmp/$1.log
  shift
  port=$(free_port)
  "$tmp/server" -data "$tmp/$name" -addr "127.0.0.1:$port" -rate-per-key 0 -rate-per-tenant 0 "$@" >"$log" 2>&1 &
  pids+=($!)
  ports[$name]=$port
  local keyfile=
  [[ $name == pg2b ]] || keyfile=$tmp/$name/management.key
  wait_for "$!" "$port" "$keyfile" "$log"
}

serve pg1 -store postgres -dsn "$dsn" -schema one
serve pg2a -store postgres -dsn "$dsn" -schema two
serve pg2b -store postgres -dsn "$dsn" -schema two -master-key-file "$tmp/pg2a/master.key"
serve bolt
floor_port=$(free_port)
"$tmp/floor" -addr "127.0.0.1:$floor_port" >"$tmp/floor.log" 2>&1 &
pids+=($!)
wait_for "$!" "$floor_port" "" "$tmp/floor.log"

# app NAME creates a private application (token:create, token:read) with
# NAME's management key and prints its key.
app() {
  local mgmt out key
  mgmt=$(tr -d '[:space:]' <"$tmp/$1/management.key")
  out=$(curl -sS -X POST "http://127.0.0.1:${ports[$1]}/applications" \
    -H "SVC-API-KEY: $mgmt" -H 'Content-Type: application/json' \
    -d '{"name":"bench","type":"private","permissions":["token:create","token:read"]}')
  key=$(sed -n 's/.*"key":"\([^"]*\)".*/\1/p' <<<"$out")
  [[ -n $key ]] || { echo "creating the bench application on $1 failed: $out" >&2; return 1; }
  echo "$key"
}
declare -A keys
keys[pg1]=$(app pg1)
keys[pg2a]=$(app pg2a)
keys[pg2b]=${keys[pg2a]} # one tenant, one key, two instances
keys[bolt]=$(app bolt)

echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (fsync on), $DURATION per run, $ROUNDS round(s), $(nproc) CPUs, $(go env GOVERSION)" >&2

# load NAME C [FLAGS...] runs loadgen in tokenize mode against server NAME
# at concurrency C and prints its line.
load() {
  local name=$1 c=$2
  shift 2
  "$tmp/loadgen" -url "http://127.0.0.1:${ports[$name]}" -key "${keys[$name]}" -mode tokenize -c "$c" -d "$DURATION" "$@"
}

# pg_errors FROM prints the serialization failures and deadlocks PostgreSQL
# logged after line FROM of its log, as "S D".
pg_errors() {
  tail -n +"$(($1 + 1))" "$pg_log" | awk '
    /ERROR: +could not serialize access/ { s++ }
    /ERROR: +deadlock detected/ { d++ }
    END { printf "%d %d\n", s, d }'
}
pg_lines() { wc -l <"$pg_log"; }

# results[FIGURE/ROUND]: calls a second (floor, one, two, bolt), the PG
# runs' calls, errors, serialization failures and deadlocks.
declare -A results
for ((round = 1; round <= ROUNDS; round++)); do
  ((ROUNDS == 1)) || echo "round $round of $ROUNDS" >&2

  line=$("$tmp/loadgen" -url "http://127.0.0.1:$floor_port" -mode empty -path /health -c 64 -d "$DURATION")
  echo "floor: $line" >&2
  results[floor/$round]=$(field req/s "$line")

  from=$(pg_lines)
  line=$(load pg1 64)
  echo "pg-one: $line" >&2
  read -r s d < <(pg_errors "$from")
  results[one/$round]=$(field req/s "$line")
  results[one-calls/$round]=$(field requests "$line")
  results[one-errors/$round]=$(field errors "$line")
  results[one-ser/$round]=$s
  results[one-dead/$round]=$d

  from=$(pg_lines)
  load pg2a 32 >"$tmp/two-a.out" &
  a_pid=$!
  load pg2b 32 >"$tmp/two-b.out" &
  b_pid=$!
  wait "$a_pid" "$b_pid"
  la=$(<"$tmp/two-a.out")
  lb=$(<"$tmp/two-b.out")
  echo "pg-two (a): $la" >&2
  echo "pg-two (b): $lb" >&2
  read -r s d < <(pg_errors "$from")
  results[two/$round]=$(awk -v a="$(field req/s "$la")" -v b="$(field req/s "$lb")" 'BEGIN { printf "%.1f", a + b }')
  results[two-calls/$round]=$(($(field requests "$la") + $(field requests "$lb")))
  results[two-errors/$round]=$(($(field errors "$la") + $(field errors "$lb")))
  results[two-ser/$round]=$s
  results[two-dead/$round]=$d

  line=$(load bolt 64)
  echo "bolt: $line" >&2
  results[bolt/$round]=$(field req/s "$line")
done

# ratio A B prints A/B with three decimals (0 when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
# share FAILURES DEADLOCKS CALLS prints "F + D (P %)".
share() { awk -v f="$1" -v d="$2" -v n="$3" 'BEGIN { printf "%d + %d (%.2f %%)", f, d, (n > 0 ? 100 * (f + d) / n : 0) }'; }

# The cells of the table, each for round $1.
cell_floor() { echo "${results[floor/$1]}"; }
cell_bolt() { echo "${results[bolt/$1]}"; }
cell_one() { echo "${results[one/$1]}"; }
cell_two() { echo "${results[two/$1]}"; }
cell_one_bolt() { ratio "${results[one/$1]}" "${results[bolt/$1]}"; }
cell_two_one() { ratio "${results[two/$1]}" "${results[one/$1]}"; }
cell_bolt_floor() { ratio "${results[bolt/$1]}" "${results[floor/$1]}"; }
cell_one_fail() { share "${results[one-ser/$1]}" "${results[one-dead/$1]}" "${results[one-calls/$1]}"; }
cell_two_fail() { share "${results[two-ser/$1]}" "${results[two-dead/$1]}" "${results[two-calls/$1]}"; }
cell_errors() { echo "${results[one-errors/$1]} / ${results[two-errors/$1]}"; }

# row LABEL FN prints a table row: LABEL, then FN ROUND for each round.
row() {
  local label=$1 fn=$2 r cells=()
  for ((r = 1; r <= ROUNDS; r++)); do cells+=("$($fn "$r")"); done
  printf '| %s |' "$label"
  printf ' %s |' "${cells[@]}"
  printf '\n'
}
last_over_first() {
  if ((ROUNDS == 1)); then echo "—"; else ratio "${results[$1/$ROUNDS]}" "${results[$1/1]}"; fi
}

echo
printf '| c=64, POST /tokenize, one value a call |'
for ((r = 1; r <= ROUNDS; r++)); do printf ' round %d |' "$r"; done
printf '\n|---|'
for ((r = 1; r <= ROUNDS; r++)); do printf -- '---|'; done
printf '\n'
row "HTTP floor (GET /health), calls/s" cell_floor
row "bbolt, calls/s" cell_bolt
row "PostgreSQL one instance, calls/s" cell_one
row "PostgreSQL two instances, summed calls/s" cell_two
row "PG one / bbolt" cell_one_bolt
row "PG two / PG one" cell_two_one
row "bbolt / floor" cell_bolt_floor
row "PG one: serialization failures + deadlocks (share of calls)" cell_one_fail
row "PG two: serialization failures + deadlocks (share of calls)" cell_two_fail
row "calls that failed, PG one / PG two" cell_errors
echo
echo "| last round / first | PG one | PG two | bbolt |"
echo "|---|---|---|---|"
echo "| calls/s | $(last_over_first one) | $(last_over_first two) | $(last_over_first bolt) |"
