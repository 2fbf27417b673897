#!/bin/sh
# How the image starts Signet (the Dockerfile's CMD), and how test/system/productionBuild.test.ts starts it:
# plain node on the build of `npm run build`, with no tsx and no webpack. The flags, as `npm start` has
# them, and MALLOC_ARENA_MAX are explained in docs/deploying.md ("Node's heap on a small machine").
cd "$(dirname "$0")/.." || exit 1
export MALLOC_ARENA_MAX=2
exec node --max-old-space-size=384 --max-semi-space-size=8 --heap-growing-percent=75 dist/src/main.js
