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
failures=$(mktemp)
step() {
  local name=$1 out code
  echo "── $name"
  shift
  out=$(mktemp)
  "$@" 2>&1 | tee "$out"
  code=${PIPESTATUS[0]}
  cat "$out" >>"$log"
  # What failed, kept to be shown again at the end, where the tail of a CI log shows it: mocha's
  # failure reports, or the last lines of a step that failed without them (lint, the type check).
  if grep -Eq '^ +[0-9]+ failing' "$out"; then
    awk -v step="$name" '/^ +[0-9]+ failing/ { print "── " step; p = 1 } p' "$out" | head -n 60 >>"$failures"
  elif [ "$code" -ne 0 ]; then
    { echo "── $name (exit $code)"; tail -n 20 "$out"; } >>"$failures"
  fi
  [ "$code" -eq 0 ] || status=1
  rm -f "$out"
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
if [ -s "$failures" ]; then
  echo
  echo "What failed, again:"
  cat "$failures"
fi
rm -f "$failures"
echo
echo "$passed passed, $failed failed"
exit $status
