#!/usr/bin/env bash
# `npm test`: provision and start the real services (PostgreSQL, Temporal dev server, Elasticsearch 8)
# on loopback, then lint, type-check and run every suite. The integration suite runs twice: on the
# PostgreSQL server and on the embedded PGlite. Then the unit tests and the PGlite integration suite
# again on Node 24, the production image's runtime (scripts/test-node24.sh), while the rest ran on the
# machine's Node (20 or later). Services are stopped however the run ends.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/provision.sh all || exit 1
trap 'bash scripts/services.sh down >/dev/null 2>&1' EXIT
bash scripts/services.sh up >/dev/null || exit 1
source .cache/run/services.env

status=0
log=$(mktemp)
step() {
  echo "── $1"
  shift
  "$@" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

step "lint" npm run -s lint
step "type check" npx tsc --noEmit
step "unit, workflow and system tests" npx mocha 'test/unit/**/*.test.ts' 'test/workflows/**/*.test.ts' 'test/system/**/*.test.ts'
step "integration tests on PostgreSQL" env SIGNET_TEST_DB=postgres npx mocha --require test/support/hooks.ts 'test/integration/**/*.test.ts'
step "integration tests on PGlite" env SIGNET_TEST_DB=pglite npx mocha --require test/support/hooks.ts 'test/integration/**/*.test.ts'
step "browser tests (headless Chromium)" env SIGNET_TEST_DB=postgres npx mocha --require test/support/hooks.ts 'test/browser/**/*.test.ts'
step "unit and PGlite integration tests on Node 24" bash scripts/test-node24.sh

# One closing line over all the mocha runs.
passed=$(grep -Eo '^ +[0-9]+ passing' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '^ +[0-9]+ failing' "$log" | awk '{s+=$1} END {print s+0}')
rm -f "$log"
[ "$failed" -eq 0 ] || status=1
echo
echo "$passed passed, $failed failed"
exit $status
