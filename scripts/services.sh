#!/usr/bin/env bash
# Run the real services the test suite needs, on 127.0.0.1, with data under <repo>/.cache/run.
#
#   scripts/services.sh up     provision, (re)start PostgreSQL, Temporal and Elasticsearch, wait until
#                              ready, write .cache/run/services.env and print it on stdout
#   scripts/services.sh down   stop them (never fails if already stopped)
#   scripts/services.sh env    print .cache/run/services.env
#
# A service whose variable (DATABASE_URL, TEMPORAL_ADDRESS, ELASTICSEARCH_URL) is already set to
# another address is not started; that value is written to services.env as given.
# Ports: SIGNET_TEST_PG_PORT (25432), SIGNET_TEST_TEMPORAL_PORT (27233), SIGNET_TEST_ES_PORT (29200,
# transport SIGNET_TEST_ES_TRANSPORT_PORT 29300). Readiness timeout: SIGNET_SERVICES_TIMEOUT (120 s).
# The ports are deliberately below Linux's ephemeral range (32768-60999): there, a client polling a
# port nobody listens on yet can be handed that very port as its source port and connect to itself
# (TCP self-connect), and the service then fails to bind with "Address already in use".
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/provision.sh"   # REPO, CACHE, ES_HOME, provision_* functions
log() { printf '[services] %s\n' "$*" >&2; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

RUN="$CACHE/run"
ENV_FILE="$RUN/services.env"
PG_PORT="${SIGNET_TEST_PG_PORT:-25432}"
TEMPORAL_PORT="${SIGNET_TEST_TEMPORAL_PORT:-27233}"
ES_PORT="${SIGNET_TEST_ES_PORT:-29200}"
ES_TRANSPORT_PORT="${SIGNET_TEST_ES_TRANSPORT_PORT:-29300}"
TIMEOUT="${SIGNET_SERVICES_TIMEOUT:-120}"
SVC_USER="${SIGNET_SERVICE_USER:-postgres}"   # PostgreSQL and Elasticsearch refuse to run as root

OUR_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/signet"
OUR_TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
OUR_ELASTICSEARCH_URL="http://127.0.0.1:$ES_PORT"
SERVICES=(postgres temporal elasticsearch)

# The variable a service is reached through, and the address we serve it on.
var_of() { case $1 in postgres) echo DATABASE_URL ;; temporal) echo TEMPORAL_ADDRESS ;; elasticsearch) echo ELASTICSEARCH_URL ;; esac; }
# True when the service is provided from outside. A value equal to our own address (e.g. left over
# from sourcing an earlier services.env) does not count: we (re)start that service.
external() { local v; v="$(var_of "$1")"; local ours="OUR_$v"; [[ -n ${!v:-} && ${!v} != "${!ours}" ]]; }

# Prefix that runs a command as the service user when we are root. setpriv execs (no extra
# process), so `$!` after backgrounding is the service's own pid.
SVC=()
setup_service_user() {
  [[ $EUID -eq 0 ]] || return 0
  if ! id -u "$SVC_USER" >/dev/null 2>&1; then
    log "creating system user $SVC_USER"
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$SVC_USER"
  fi
  SVC=(setpriv --reuid="$SVC_USER" --regid="$(id -g "$SVC_USER")" --init-groups --)
  # The service user must be able to traverse down to .cache (parents may be e.g. /root, mode 700).
  local d="$CACHE" perm
  while [[ $d != / ]]; do
    perm="$(stat -c %A "$d")"
    if [[ ${perm: -1} != [xt] ]]; then log "chmod o+x $d (so $SVC_USER can reach .cache)"; chmod o+x "$d"; fi
    d="$(dirname "$d")"
  done
}
own() { if [[ $EUID -eq 0 ]]; then chown -R "$SVC_USER:" "$@"; fi; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
check_port_free() { if port_busy "$1"; then die "port $1 ($2) is already in use by another process (set $3 to use another port)"; fi; }

# ---------------------------------------------------------------- start
start_postgres() {
  local data="$RUN/pg" sock="$RUN"
  # A unix socket path must fit in ~107 bytes; without one we still serve TCP, which is all we use.
  (( ${#sock} < 90 )) || sock=""
  mkdir -p "$data" && chmod 700 "$data" && own "$data"
  (cd "$RUN" && "${SVC[@]}" "$PG_BIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C -N) \
    >"$RUN/postgres-initdb.log" 2>&1 || { tail -n 20 "$RUN/postgres-initdb.log" >&2; die "initdb failed"; }
  # Durability is irrelevant for a throw-away test database: trade it for speed.
  cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$sock'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  # setsid: own session, so the service outlives this script and the caller's Ctrl-C.
  # 8>&- 9>&-: don't hand our lock fds to the daemon (it would hold the lock forever).
  (cd "$RUN" && exec setsid "${SVC[@]}" "$PG_BIN/postgres" -D "$data" </dev/null >"$RUN/postgres.log" 2>&1 8>&- 9>&-) &
  echo $! >"$RUN/postgres.pid"
}

start_temporal() {
  # No search attributes at launch: Signet registers its own, as against any Temporal server.
  (cd "$RUN" && exec setsid "$TEMPORAL_BIN" server start-dev --headless --ip 127.0.0.1 --port "$TEMPORAL_PORT" \
      --db-filename "$RUN/temporal.db" --log-level warn --dynamic-config-value system.enableActivityEagerExecution=true \
      </dev/null >"$RUN/temporal.log" 2>&1 8>&- 9>&-) &
  echo $! >"$RUN/temporal.pid"
}

start_elasticsearch() {
  local es="$RUN/es"
  mkdir -p "$es/data" "$es/logs" "$es/tmp"
  # A private copy of config/: ES writes its keystore there, and ES_HOME stays read-only.
  cp -R "$ES_HOME/config" "$es/config"
  # jvm.options puts GC logs, heap dumps and crash files relative to ES_HOME (read-only for us).
  sed -i -e "s#file=logs/gc.log#file=$es/logs/gc.log#" -e "s#^-XX:HeapDumpPath=data#-XX:HeapDumpPath=$es/data#" \
    -e "s#^-XX:ErrorFile=logs/#-XX:ErrorFile=$es/logs/#" "$es/config/jvm.options"
  own "$es"
  # No query split across the segments of a shard: on 2 cores beside the api and PostgreSQL it doubles
  # a search's CPU for no gain in its time (docs/deploying.md).
  # (JAVA_HOME unset: ES only warns that it ignores it in favour of ES_JAVA_HOME.)
  (cd "$es" && exec env -u JAVA_HOME ES_JAVA_HOME="$JAVA_HOME" ES_PATH_CONF="$es/config" ES_TMPDIR="$es/tmp" \
    ES_JAVA_OPTS="-Xms512m -Xmx512m" setsid "${SVC[@]}" "$ES_HOME/bin/elasticsearch" -p "$es/server.pid" \
      -Ecluster.name=signet-test -Enode.name=signet-test \
      -Ediscovery.type=single-node \
      -Ehttp.host=127.0.0.1 -Ehttp.port="$ES_PORT" \
      -Etransport.host=127.0.0.1 -Etransport.port="$ES_TRANSPORT_PORT" \
      -Epath.data="$es/data" -Epath.logs="$es/logs" \
      -Ecluster.routing.allocation.disk.threshold_enabled=false \
      -Expack.security.enabled=false \
      -Eaction.destructive_requires_name=false \
      -Esearch.query_phase_parallel_collection_enabled=false \
      </dev/null >"$RUN/elasticsearch.log" 2>&1 8>&- 9>&-) &
  echo $! >"$RUN/elasticsearch.pid"
}

# ---------------------------------------------------------------- readiness
pg_tool() { if [[ -x $PG_BIN/$1 ]]; then echo "$PG_BIN/$1"; else echo "$1"; fi; }   # client tools may live on PATH only
postgres_ready() { "$(pg_tool pg_isready)" -q -h 127.0.0.1 -p "$PG_PORT" -t 2; }
temporal_ready() {
  "$TEMPORAL_BIN" operator cluster health --address "$OUR_TEMPORAL_ADDRESS" --command-timeout 3s &&
    "$TEMPORAL_BIN" operator namespace describe --address "$OUR_TEMPORAL_ADDRESS" --command-timeout 3s --namespace default
}
elasticsearch_ready() { curl -fsS -m 5 "$OUR_ELASTICSEARCH_URL/_cluster/health?wait_for_status=yellow&timeout=3s"; }

# Running (a zombie, killed but not yet reaped by init, counts as gone).
alive() { local st; st="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)" && [[ -n $st && ${st:0:1} != Z ]]; }

# wait_ready SERVICE: poll until ready; fail early if the process died, or at the deadline.
wait_ready() {
  local s=$1 pid; pid="$(cat "$RUN/$s.pid")"
  until "${s}_ready" >/dev/null 2>&1; do
    if ! alive "$pid"; then
      log "$s exited during startup; last lines of $RUN/$s.log:"; tail -n 40 "$RUN/$s.log" >&2; return 1
    fi
    if (( SECONDS >= DEADLINE )); then
      log "$s not ready after ${TIMEOUT}s; last lines of $RUN/$s.log:"; tail -n 40 "$RUN/$s.log" >&2; return 1
    fi
    sleep 0.5
  done
  log "$s ready on 127.0.0.1 (${SECONDS}s)"
}

# ---------------------------------------------------------------- stop
# Is PID one of ours? Every service has the run dir in its command line; this guards against a
# stale pid file whose pid was reused by an unrelated process.
ours() { [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$RUN/"; }

stop_all() {
  local f pid pids=() sigs=()
  # Read every pid file before signalling: ES deletes server.pid as soon as it starts stopping.
  for f in "$RUN"/{postgres,temporal,elasticsearch}.pid "$RUN/es/server.pid"; do
    pid="$(cat "$f" 2>/dev/null)" || continue
    [[ $pid =~ ^[0-9]+$ ]] && ours "$pid" || continue
    pids+=("$pid")
    # SIGINT = PostgreSQL "fast" shutdown (SIGTERM would wait for clients to disconnect).
    if [[ $f == */postgres.pid ]]; then sigs+=(INT); else sigs+=(TERM); fi
  done
  local i; for i in "${!pids[@]}"; do kill -s "${sigs[$i]}" "${pids[$i]}" 2>/dev/null || true; done
  (( ${#pids[@]} )) || { rm -f "$RUN"/*.pid; return 0; }
  log "stopping ${#pids[@]} process(es): ${pids[*]}"
  local end=$((SECONDS + 30)) left
  while :; do
    left=(); for pid in "${pids[@]}"; do if alive "$pid"; then left+=("$pid"); fi; done
    (( ${#left[@]} )) || break
    if (( SECONDS >= end )); then log "killing ${left[*]} after 30s"; kill -KILL "${left[@]}" 2>/dev/null || true; sleep 1; break; fi
    sleep 0.2
  done
  rm -f "$RUN"/*.pid
}

# ---------------------------------------------------------------- commands
# Our values are printed bare; anything else single-quoted (readable by sh and simple parsers).
shell_quote() { if [[ $1 =~ ^[A-Za-z0-9_@%+=:,./-]*$ ]]; then printf %s "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi; }

cmd_up() {
  local s v started=()
  for s in "${SERVICES[@]}"; do
    v="$(var_of "$s")"; local ours="OUR_$v"
    if [[ -n ${!v:-} && ${!v} == "${!ours}" ]]; then unset "$v"; fi   # ours from an earlier `up`: restart it
  done
  stop_all
  # Provision (may apt-get/build on a cold machine: not counted in the readiness timeout).
  provision_lock
  external postgres || provision_postgres
  external temporal || provision_temporal
  if ! external elasticsearch; then
    provision_elasticsearch
    command -v curl >/dev/null || apt_install curl
  fi
  exec 8>&-   # release the provision lock
  setup_service_user

  rm -rf "$RUN" && mkdir -p "$RUN" && own "$RUN"   # fresh data every `up`
  external postgres || { check_port_free "$PG_PORT" postgres SIGNET_TEST_PG_PORT; started+=(postgres); }
  external temporal || { check_port_free "$TEMPORAL_PORT" temporal SIGNET_TEST_TEMPORAL_PORT; started+=(temporal); }
  external elasticsearch || { check_port_free "$ES_PORT" elasticsearch SIGNET_TEST_ES_PORT
                              check_port_free "$ES_TRANSPORT_PORT" elasticsearch SIGNET_TEST_ES_TRANSPORT_PORT
                              started+=(elasticsearch); }

  # Start everything first (the JVM and Temporal boot while initdb runs), then wait for each.
  SECONDS=0; DEADLINE=$TIMEOUT
  for s in elasticsearch temporal postgres; do
    if [[ " ${started[*]} " == *" $s "* ]]; then log "starting $s"; "start_$s"; fi
  done
  for s in "${started[@]}"; do
    wait_ready "$s" || { stop_all; die "$s failed to start (logs in $RUN)"; }
  done
  if [[ " ${started[*]} " == *" postgres "* ]]; then
    timeout 60 "$(pg_tool psql)" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
      -c 'CREATE DATABASE signet' >&2 || { stop_all; die "could not create database signet"; }
  fi

  for s in "${started[@]}"; do v="$(var_of "$s")"; local ours="OUR_$v"; printf -v "$v" %s "${!ours}"; done
  for v in DATABASE_URL TEMPORAL_ADDRESS ELASTICSEARCH_URL; do
    if [[ -n ${!v:-} ]]; then printf 'export %s=%s\n' "$v" "$(shell_quote "${!v}")"; fi
  done >"$ENV_FILE"
  log "up in ${SECONDS}s (started: ${started[*]:-nothing}); env in $ENV_FILE"
  cat "$ENV_FILE"
}

cmd_down() { stop_all; rm -f "$ENV_FILE"; log "down"; }

cmd_env() { [[ -f $ENV_FILE ]] || die "services are not up (run: bash scripts/services.sh up)"; cat "$ENV_FILE"; }

case "${1:-}" in
  up|down)
    mkdir -p "$CACHE"
    exec 9>"$CACHE/services.lock"   # one up/down at a time
    flock -w 300 9 || die "timed out waiting for $CACHE/services.lock"
    "cmd_$1" ;;
  env) cmd_env ;;
  *) echo "usage: $0 up|down|env" >&2; exit 2 ;;
esac
