# bench/lib.sh: helpers shared by bench/run.sh, bench/pg.sh and bench/crash.sh (sourced).

# port_free reports whether nothing answers on 127.0.0.1:$1.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port prints a free loopback port from a random start, skipping $1.
free_port() {
  local port=$((20000 + RANDOM % 20000)) i
  for ((i = 0; i < 200; i++, port++)); do
    if [[ $port != "${1:-}" ]] && port_free "$port"; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# field prints the value of key $1 in the key=value line $2 (a slog line).
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (substr($i, 1, n - 1) == k) print substr($i, n + 1) } }' <<<"$2"; }

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
