#!/usr/bin/env bash
# Load, churn and kill -9 against `shellgate mcp --http` (e2e/load.mjs): 1 000 mixed
# calls over 20 sessions, 500 sessions opened and abandoned, a kill -9 with 20
# sessions' calls in flight; it checks that every call was answered, that nothing
# was left running, that memory, descriptors and child processes came back to
# baseline, and that every audit line is valid, and prints the figures
# docs/benchmarks.md quotes. About 4 minutes (the abandoned sessions are closed
# 2 minutes after they start). Needs Go, Node.js and npm; everything it makes
# goes in one directory under /var/tmp, removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d /var/tmp/shellgate-load.XXXXXX)
trap 'rm -rf "$work"' EXIT

CGO_ENABLED=0 go build -o "$work/shellgate" ./cmd/shellgate  # as README installs it
[ -d e2e/node_modules/@modelcontextprotocol/sdk ] || (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
cd e2e && SHELLGATE_BIN="$work/shellgate" node load.mjs
