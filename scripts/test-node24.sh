#!/usr/bin/env bash
# CI's second runtime: the unit and workflow tests and the integration suite on PGlite, on Node 24 (the
# production image's, provisioned by scripts/node24.sh), with node_modules as `npm ci` installed them on
# the machine's Node. Nothing is rebuilt: the native modules (@swc/core, @napi-rs/canvas,
# @temporalio/core-bridge) are Node-API addons, whose ABI does not change between Node versions.
# Needs the services up with .cache/run/services.env sourced, as scripts/test.sh has them.
set -uo pipefail
cd "$(dirname "$0")/.."

node24="$(bash scripts/node24.sh | tail -1)" || exit 1
# Whatever runs `node` by name (npm, npx, mocha, the PDF pool's children through process.execPath) gets Node 24.
export PATH="$(dirname "$node24"):$PATH"
[[ $(node --version) == v24.* ]] || { echo "node on PATH is $(node --version), not Node 24" >&2; exit 1; }
echo "Node $(node --version)"

status=0
npm run -s test:unit || status=1
SIGNET_TEST_DB=pglite npx mocha --require test/support/hooks.ts 'test/integration/**/*.test.ts' || status=1
exit $status
