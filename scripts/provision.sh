#!/usr/bin/env bash
# Provision the real services the test suite needs (Debian 12, run as root on CI).
#
#   scripts/provision.sh [all|postgres|temporal|temporal-server|test-server|elasticsearch|browser|compose|schemathesis|pyhanko|certomancer|softhsm|local-kms]...   (default: all)
#
# Idempotent; downloads and builds are cached under <repo>/.cache. Logs go to stderr.
# `temporal` prints the absolute path of the temporal binary as the last stdout line:
#   bash scripts/provision.sh temporal | tail -1
# Only the ordinary package clients are used (apt-get, go install, mvn), which know
# where their registries are. Can also be sourced (services.sh does) for its functions.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
CACHE="$REPO/.cache"
ES_VERSION=8.17.4
ES_HOME="$CACHE/elasticsearch-$ES_VERSION"
TEMPORAL_CLI_VERSION=v1.5.1
TEMPORAL_SERVER_VERSION=v1.29.1   # the version of docker-compose.yml's temporalio/auto-setup image
# The module proxy serves local-kms only as pseudo-versions (its v3 tags lack a /v3 module path): this is its 2026-02-28 commit.
LOCAL_KMS_VERSION=v0.0.0-20260228092603-2a5e92d09ab6

log() { printf '[provision] %s\n' "$*" >&2; }
die() { printf '[provision] ERROR: %s\n' "$*" >&2; exit 1; }

APT_UPDATED=0
apt_install() { # apt_install PKG... ; `apt-get update` at most once per run
  [[ $EUID -eq 0 ]] || die "need root to apt-get install $* (or install it yourself)"
  command -v apt-get >/dev/null || die "no apt-get: install $* yourself"
  export DEBIAN_FRONTEND=noninteractive
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update"
    timeout 600 apt-get -o DPkg::Lock::Timeout=300 update -q >&2 || die "apt-get update failed"
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  # (Lock::Timeout: wait for a concurrent apt/dpkg instead of failing at once.)
  timeout 1800 apt-get -o DPkg::Lock::Timeout=300 install -y -q "$@" >&2 || die "apt-get install $* failed"
}

# ---------------------------------------------------------------- postgres
# Sets PG_BIN to a directory holding initdb, pg_ctl and postgres.
find_pg_bin() {
  local d
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null && command -v postgres >/dev/null; then
    PG_BIN="$(dirname "$(readlink -f "$(command -v postgres)")")"; return 0
  fi
  # Debian keeps the server binaries off PATH; pick the highest version.
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V -r); do
    if [[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]]; then PG_BIN="$d"; return 0; fi
  done
  return 1
}

provision_postgres() {
  if ! find_pg_bin; then
    # Don't let the Debian package create and start its own cluster on :5432.
    if [[ $EUID -eq 0 && ! -e /etc/postgresql-common/createcluster.conf ]]; then
      mkdir -p /etc/postgresql-common
      echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf
    fi
    apt_install postgresql
    find_pg_bin || die "postgresql installed but initdb/pg_ctl/postgres not found"
  fi
  command -v psql >/dev/null || [[ -x $PG_BIN/psql ]] || apt_install postgresql-client
  log "postgres: $PG_BIN"
}

# ---------------------------------------------------------------- temporal
find_go() {
  if command -v go >/dev/null; then command -v go; return 0; fi
  if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return 0; fi
  return 1
}

# Sets TEMPORAL_BIN.
provision_temporal() {
  if [[ -n ${TEMPORAL_CLI_PATH:-} ]]; then
    [[ -x $TEMPORAL_CLI_PATH ]] || die "TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH is not executable"
    TEMPORAL_BIN="$(readlink -f "$TEMPORAL_CLI_PATH")"
  elif command -v temporal >/dev/null; then
    TEMPORAL_BIN="$(readlink -f "$(command -v temporal)")"
  elif [[ -x $CACHE/bin/temporal ]]; then
    TEMPORAL_BIN="$CACHE/bin/temporal"
  else
    local go
    go="$(find_go)" || { apt_install golang-go; go="$(find_go)"; } || die "no Go toolchain available to build temporal"
    mkdir -p "$CACHE/bin"
    log "building temporal CLI $TEMPORAL_CLI_VERSION with $go ($("$go" version)); takes a few minutes when cold"
    # GOTOOLCHAIN=auto lets an older (>=1.21) go fetch the toolchain the module asks for.
    GOBIN="$CACHE/bin" GOTOOLCHAIN=auto timeout 1800 \
      "$go" install -v "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2 \
      || die "go install of temporal CLI failed (Debian's golang-go may be too old: it needs a recent Go)"
    TEMPORAL_BIN="$CACHE/bin/temporal"
  fi
  log "temporal: $TEMPORAL_BIN"
}

# ---------------------------------------------------------------- temporal server (as deployed)
# The Temporal server itself and its SQL schema tool, built from the Go module proxy at the version
# docker-compose.yml deploys: the topology test runs them on PostgreSQL as auto-setup would.
# Sets TEMPORAL_SERVER_BIN and TEMPORAL_SQL_TOOL_BIN.
provision_temporal_server() {
  local dir="$CACHE/temporal-server-$TEMPORAL_SERVER_VERSION"
  TEMPORAL_SERVER_BIN="$dir/temporal-server" TEMPORAL_SQL_TOOL_BIN="$dir/temporal-sql-tool"
  if [[ ! -x $TEMPORAL_SERVER_BIN || ! -x $TEMPORAL_SQL_TOOL_BIN ]]; then
    local go tmp="$dir.tmp"
    go="$(find_go)" || { apt_install golang-go; go="$(find_go)"; } || die "no Go toolchain available to build the temporal server"
    rm -rf "$tmp" && mkdir -p "$tmp"
    log "building temporal server $TEMPORAL_SERVER_VERSION and its SQL tool with $go; takes several minutes when cold"
    GOBIN="$tmp" GOTOOLCHAIN=auto timeout 2400 "$go" install \
      "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" >&2 \
      || die "go install of the temporal server failed"
    mv "$tmp/server" "$tmp/temporal-server" && mv "$tmp/sql" "$tmp/temporal-sql-tool"
    rm -rf "$dir" && mv "$tmp" "$dir"
  fi
  log "temporal server: $TEMPORAL_SERVER_BIN"
}

# ---------------------------------------------------------------- compose
# A real Compose implementation to validate docker-compose.yml (`docker-compose config` needs no engine).
provision_compose() {
  command -v docker-compose >/dev/null || apt_install docker-compose
  log "compose: $(command -v docker-compose)"
  # promtool checks prometheus.yml; Debian ships it in the server's package (not started by the install).
  command -v promtool >/dev/null || apt_install --no-install-recommends prometheus
}

# ---------------------------------------------------------------- Python tools
# A Python tool from PyPI into a virtualenv of its own under .cache/NAME, every package pinned by
# scripts/NAME-requirements.txt (a new pin installs afresh); CHECK, run in its bin/, must succeed once
# it is installed.
python_venv() { # python_venv NAME CHECK...
  local name=$1 home="$CACHE/$1" requirements="$REPO/scripts/$1-requirements.txt" want
  shift
  want="$(sha256sum "$requirements" | cut -d' ' -f1)"
  if [[ "$(cat "$home/.installed" 2>/dev/null)" != "$want" ]]; then
    # Debian's python3 makes virtualenvs only with python3-venv (which brings ensurepip).
    local python=python3
    if ! { command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' 2>/dev/null; }; then
      apt_install python3-venv
      python=/usr/bin/python3
    fi
    rm -rf "$home"
    log "installing $name ($(grep -i "^$name==" "$requirements")) into $home"
    "$python" -m venv "$home" >&2 || die "$python -m venv failed"
    timeout 900 "$home/bin/pip" install -q --disable-pip-version-check --no-deps -r "$requirements" >&2 || die "pip install of $name failed"
    (cd "$home/bin" && "$@") >&2 || die "$name installed but does not run"
    echo "$want" > "$home/.installed"
  fi
  log "$name: $home"
}

# The OpenAPI fuzzer of test/system/schemathesis.test.ts (.cache/schemathesis/bin/schemathesis).
provision_schemathesis() { python_venv schemathesis ./schemathesis --version; }

# The independent PAdES validator of test/system/padesSeal.test.ts (.cache/pyhanko/bin/python).
provision_pyhanko() { python_venv pyhanko ./python -c 'import pyhanko.sign.validation, pyhanko.sign.ades.report'; }

# The test PKI of test/support/testPki.ts: CAs, OCSP, CRLs and TSAs on loopback (.cache/certomancer/bin/certomancer).
provision_certomancer() { python_venv certomancer ./python -c 'import certomancer.integrations.animator, cryptography.hazmat.primitives.serialization.pkcs12'; }

# ---------------------------------------------------------------- elasticsearch
java_major() { # prints the major version of `java` on PATH (0 if unknown)
  local v; v="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
  echo "${v:-0}"
}

# Sets JAVA_HOME and ES_HOME (unless ELASTICSEARCH_URL is set: an external ES is used).
ensure_java() {
  if ! command -v java >/dev/null || (( $(java_major) < 17 )); then
    apt_install openjdk-17-jre-headless
    hash -r
    command -v java >/dev/null && (( $(java_major) >= 17 )) || die "java 17+ not on PATH after install"
  fi
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  export JAVA_HOME
}

# ---------------------------------------------------------------- temporal time-skipping test server
# @temporalio/testing's time-skipping environment runs Temporal's Java test server. Its usual binary
# download is out of reach here, so the same server comes from Maven Central as a jar with its
# dependencies, behind a launcher script given to TestWorkflowEnvironment as an existing path.
TEST_SERVER_VERSION=1.31.0
TEST_SERVER_HOME="$CACHE/temporal-test-server"

provision_test_server() {
  ensure_java
  [[ -x $TEST_SERVER_HOME/temporal-test-server ]] && { log "temporal test server: $TEST_SERVER_HOME"; return 0; }
  command -v mvn >/dev/null || apt_install maven
  rm -rf "$TEST_SERVER_HOME" && mkdir -p "$TEST_SERVER_HOME"
  cat > "$TEST_SERVER_HOME/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>signet</groupId><artifactId>temporal-test-server</artifactId><version>1</version>
  <dependencies><dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$TEST_SERVER_VERSION</version></dependency></dependencies>
</project>
POM
  log "fetching temporal-test-server $TEST_SERVER_VERSION and its dependencies with mvn"
  timeout 1200 mvn -B -q -Dstyle.color=never -f "$TEST_SERVER_HOME/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$TEST_SERVER_HOME/lib" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2 \
    || die "mvn could not fetch temporal-test-server"
  cat > "$TEST_SERVER_HOME/temporal-test-server" <<LAUNCHER
#!/usr/bin/env bash
exec "$JAVA_HOME/bin/java" -cp "$TEST_SERVER_HOME/lib/*" io.temporal.testserver.TestServer "\$@"
LAUNCHER
  chmod +x "$TEST_SERVER_HOME/temporal-test-server"
  log "temporal test server: $TEST_SERVER_HOME"
}

provision_elasticsearch() {
  if [[ -n ${ELASTICSEARCH_URL:-} ]]; then log "elasticsearch: using ELASTICSEARCH_URL=$ELASTICSEARCH_URL"; return 0; fi
  ensure_java

  if [[ ! -x $ES_HOME/bin/elasticsearch ]]; then
    local zip="$CACHE/downloads/elasticsearch-$ES_VERSION.zip"
    if [[ ! -s $zip ]]; then
      command -v mvn >/dev/null || apt_install maven
      mkdir -p "$CACHE/downloads"
      # The integ-test-zip is the only Elasticsearch distribution published to Maven Central.
      log "fetching elasticsearch $ES_VERSION (integ-test-zip) with mvn"
      timeout 1200 mvn -B -q -Dstyle.color=never dependency:copy \
        -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
        -DoutputDirectory="$CACHE/downloads" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2 \
        || die "mvn dependency:copy of elasticsearch failed"   # (sed: mvn emits colour resets even with -B)
      [[ -s $zip ]] || die "mvn did not produce $zip"
    fi
    command -v unzip >/dev/null || apt_install unzip
    local tmp="$CACHE/elasticsearch-$ES_VERSION.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp"
    unzip -q "$zip" -d "$tmp" || { rm -f "$zip"; die "unzip failed: removed $zip, re-run to fetch it again"; }
    [[ -x $tmp/elasticsearch-$ES_VERSION/bin/elasticsearch ]] || die "unexpected layout in $zip"
    chmod -R a+rX "$tmp"          # the service runs as a non-root user
    rm -rf "$ES_HOME"
    mv "$tmp/elasticsearch-$ES_VERSION" "$ES_HOME" && rmdir "$tmp"
  fi
  log "elasticsearch: $ES_HOME (java: $JAVA_HOME)"
}

# ---------------------------------------------------------------- browser
provision_browser() {
  local pkgs=()
  command -v chromium >/dev/null || pkgs+=(chromium)
  command -v pdfsig >/dev/null && command -v pdftoppm >/dev/null || pkgs+=(poppler-utils) # tests read sealed PDFs with pdfsig, pdftotext, pdftoppm
  command -v qpdf >/dev/null || pkgs+=(qpdf)
  if (( ${#pkgs[@]} )); then apt_install "${pkgs[@]}"; fi
  command -v chromium pdfsig pdftoppm qpdf >/dev/null || die "chromium/pdfsig/pdftoppm/qpdf still missing"
  log "browser: chromium, pdfsig, pdftoppm, qpdf present"
}

# ---------------------------------------------------------------- seal keys: PKCS#11 token and KMS
# SoftHSM2, the PKCS#11 token test/system/sealKeys.test.ts seals with; prints its module's path.
provision_softhsm() {
  command -v softhsm2-util >/dev/null || apt_install softhsm2
  local module=/usr/lib/softhsm/libsofthsm2.so
  [[ -f $module ]] || die "softhsm2 installed but $module not found"
  log "softhsm: $module"
  echo "$module"
}

# local-kms, a server that speaks AWS KMS's protocol, for the same test (.cache/local-kms/bin/local-kms).
provision_local_kms() {
  local dir="$CACHE/local-kms" bin="$CACHE/local-kms/bin/local-kms"
  if [[ "$(cat "$dir/.installed" 2>/dev/null)" != "$LOCAL_KMS_VERSION" || ! -x $bin ]]; then
    local go
    go="$(find_go)" || { apt_install golang-go; go="$(find_go)"; } || die "no Go toolchain available to build local-kms"
    rm -rf "$dir" && mkdir -p "$dir/bin"
    log "building local-kms $LOCAL_KMS_VERSION with $go"
    GOBIN="$dir/bin" GOTOOLCHAIN=auto timeout 1200 "$go" install "github.com/nsmithuk/local-kms@$LOCAL_KMS_VERSION" >&2 \
      || die "go install of local-kms failed"
    echo "$LOCAL_KMS_VERSION" > "$dir/.installed"
  fi
  log "local-kms: $bin"
}

# Serialise concurrent provisioning (e.g. parallel test workers) so builds/unzips don't race.
provision_lock() {
  mkdir -p "$CACHE"
  exec 8>"$CACHE/provision.lock"
  flock -w 1800 8 || die "timed out waiting for $CACHE/provision.lock"
}

main() {
  (( $# )) || set -- all
  provision_lock
  local t print_temporal=0
  for t in "$@"; do
    case $t in
      all) provision_postgres; provision_temporal; provision_temporal_server; provision_test_server; provision_elasticsearch
           provision_browser; provision_compose; provision_schemathesis; provision_pyhanko; provision_certomancer; provision_softhsm >/dev/null; provision_local_kms ;;
      postgres) provision_postgres ;;
      temporal) provision_temporal; print_temporal=1 ;;
      elasticsearch) provision_elasticsearch ;;
      temporal-server) provision_temporal_server ;;
      test-server) provision_test_server ;;
      compose) provision_compose ;;
      browser) provision_browser ;;
      schemathesis) provision_schemathesis ;;
      pyhanko) provision_pyhanko ;;
      certomancer) provision_certomancer ;;
      softhsm) provision_softhsm ;;
      local-kms) provision_local_kms ;;
      *) die "unknown target '$t' (want: all postgres temporal temporal-server test-server elasticsearch browser compose schemathesis pyhanko certomancer softhsm local-kms)" ;;
    esac
  done
  if (( print_temporal )); then echo "$TEMPORAL_BIN"; fi
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
