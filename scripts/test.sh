#!/usr/bin/env bash
# Installs everything the tests need (Go modules, the npm packages of the end-to-end
# MCP clients, Node.js itself when missing) and runs every test: vet for linux,
# windows and darwin, gofmt, the Go tests, and the end-to-end tests against the real
# binary.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  step "installing Node.js and npm (Debian packages)"
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi

step "go modules"
go mod download

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi

step "go vet (linux, windows, darwin)"
go vet ./...
GOOS=windows go vet ./...
GOOS=darwin go vet ./...
GOOS=darwin GOARCH=arm64 go build ./...

step "go test"
go test -race -count=1 ./...

if [ -f e2e/package.json ]; then
  step "end-to-end MCP tests (official TypeScript SDK)"
  bin=$(mktemp -d)/shellgate
  go build -o "$bin" ./cmd/shellgate
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
  (cd e2e && SHELLGATE_BIN="$bin" node --test --test-concurrency=1)
fi
