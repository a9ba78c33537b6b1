#!/usr/bin/env bash
# Runs every test of shellgate: go mod tidy, gofmt, go vet (linux, windows, darwin),
# staticcheck, the Go tests, and the end-to-end MCP tests against the real binary
# (Node.js: the official TypeScript SDK, and the real Claude Code, Codex, Gemini CLI
# and MCP Inspector, installed from npm into e2e/node_modules, 1.6 GB). Each step says when it starts; the run
# ends with one PASS or FAIL line per step, and exits non-zero if any failed.
# On an idle 2-core machine it takes about 20 minutes, most of it the root
# package's live sandbox and corpus suites under the race detector. Packages
# are tested one at a time (-p 1): the corpus's fork-bomb and exhaustion rows
# would otherwise starve the sandbox package's process-limit tests beside them.
#
# Everything temporary (the binary, test dirs, spill files) goes in one directory,
# removed on exit: nothing is left in /tmp.
set -uo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2

work=$(mktemp -d "${TMPDIR:-/tmp}/shellgate-test.XXXXXX")
dockerd_pid=""
trap 'stop_dockerd; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export TMPDIR="$work"
# The audit log of the binaries the tests run goes there too, not in ~/.local/state.
export XDG_STATE_HOME="$work/state"

results=()
failed=0
# step NAME CMD...: runs CMD, recording PASS or FAIL for NAME.
step() {
  local name=$1
  shift
  printf '\n=== %s\n' "$name"
  if "$@"; then
    results+=("PASS  $name")
  else
    results+=("FAIL  $name")
    failed=1
  fi
}

gofmt_check() {
  local files unformatted
  files=$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*')
  unformatted=$(gofmt -l $files)
  [ -z "$unformatted" ] || { echo "gofmt would change: $unformatted"; return 1; }
}

vet_all() {
  go vet ./... && GOOS=windows go vet ./... && GOOS=darwin go vet ./... && GOOS=darwin GOARCH=arm64 go build -o /dev/null ./...
}

# node_ready makes sure node and npm exist: installed from the distribution's
# packages when this user may (root, or sudo without a password), otherwise it says
# exactly what to install.
node_ready() {
  command -v node >/dev/null && command -v npm >/dev/null && return 0
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if sudo -n true 2>/dev/null; then sudo="sudo"; else sudo="none"; fi
  fi
  if [ "$sudo" != none ] && command -v apt-get >/dev/null; then
    echo "installing Node.js and npm (apt-get install nodejs npm)"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq nodejs npm >/dev/null && return 0
  fi
  echo "The end-to-end tests need Node.js 18 or later and npm, which are not installed and"
  echo "cannot be installed from here (neither root nor password-less sudo, or no apt-get)."
  echo "Install them, e.g. 'sudo apt-get install nodejs npm', 'brew install node', or from"
  echo "https://nodejs.org, then run scripts/test.sh again."
  return 1
}

e2e() {
  node_ready || return 1
  local bin="$work/bin/shellgate"
  CGO_ENABLED=0 go build -o "$bin" ./cmd/shellgate &&
    (cd e2e && npm ci --no-audit --no-fund --loglevel=error) &&
    (cd e2e && SHELLGATE_BIN="$bin" node --test --test-concurrency=1)
}

# docker_engine gives cmd/shellgate's TestDockerDefaultProfile (shellgate in a
# container started with Docker's default profile) an engine when none answers
# and dockerd is installed: one of this run's own, its socket and data in $work,
# no network of its own (no iptables, no bridge), stopped on exit. As root with
# apt-get it first installs Debian's docker.io and busybox-static if dockerd is
# missing (about a minute and 280 MB; SHELLGATE_TEST_DOCKER=0 skips that).
# Without an engine the test is skipped, and says so.
docker_engine() {
  docker info >/dev/null 2>&1 && return 0
  if [ "${SHELLGATE_TEST_DOCKER:-1}" != 0 ] && ! command -v dockerd >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Docker (apt-get install docker.io busybox-static)"
    { apt-get install -y -qq docker.io busybox-static >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq docker.io busybox-static >/dev/null; }; } || return 1
  fi
  if ! command -v dockerd >/dev/null || [ "$(id -u)" != 0 ]; then
    echo "no Docker engine: the container test will be skipped (run as root with apt-get to install one)"
    return 0
  fi
  export DOCKER_HOST="unix://$work/docker.sock"
  dockerd --host "$DOCKER_HOST" --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs \
    --data-root "$work/docker" --exec-root "$work/docker-exec" --pidfile "$work/docker.pid" >"$work/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && { echo "started dockerd for this run"; return 0; }
    sleep 0.5
  done
  echo "dockerd did not start:"
  tail -5 "$work/dockerd.log"
  return 1
}

stop_dockerd() {
  [ -n "$dockerd_pid" ] || return 0
  kill "$dockerd_pid" 2>/dev/null && wait "$dockerd_pid" 2>/dev/null
  dockerd_pid=""
}

# fuzz_smoke runs each fuzz target for a few seconds: enough to catch a target
# that no longer builds or fails on its seeds' first mutations. Go before 1.27
# may fail a target at the -fuzztime deadline with "context deadline exceeded"
# and no failing input (golang/go#75804, a race in its coordinator): such a
# run is tried once more; a failing input written, or a second failure, fails.
fuzz_smoke() {
  local ok=0 file pkg name
  while IFS=: read -r file name; do
    pkg=./$(dirname "$file")
    echo "fuzz $name ($pkg)"
    fuzz_one "$pkg" "$name" && continue
    if ! grep -q 'Failing input written' "$work/fuzz.log" && grep -q 'context deadline exceeded' "$work/fuzz.log"; then
      echo "  the toolchain's deadline race (golang/go#75804), no failing input: once more"
      fuzz_one "$pkg" "$name" && continue
    fi
    cat "$work/fuzz.log"
    ok=1
  done < <(git grep -e '^func Fuzz' -- '*_test.go' | sed -E 's/^([^:]+):func (Fuzz[A-Za-z0-9_]+).*/\1:\2/')
  return $ok
}

fuzz_one() {
  go test -run '^$' -fuzz "^${2}\$" -fuzztime "${FUZZTIME:-3s}" "$1" >"$work/fuzz.log" 2>&1
}

echo "shellgate's tests take about 20 minutes on an idle 2-core machine: the fast lane"
echo "(go test -short ./..., about a minute) first, then the live suites under the race"
echo "detector (most of the time), then the end-to-end tests with the real agents."
echo "It downloads the agents from npm into e2e/node_modules (1.6 GB) and, as root with"
echo "apt-get, installs what is missing: nodejs and npm, docker.io and busybox-static"
echo "(SHELLGATE_TEST_DOCKER=0 leaves Docker out)."

step "go mod tidy -diff" go mod tidy -diff
step "gofmt" gofmt_check
step "go vet (linux, windows, darwin)" vet_all
step "staticcheck $STATICCHECK_VERSION" go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ./...
step "Docker engine for the container test" docker_engine
step "go test -short (the fast lane)" go test -short -count=1 ./...
step "fuzz smoke (each target, ${FUZZTIME:-3s})" fuzz_smoke
step "go test -race (the live suites)" go test -race -count=1 -p 1 -timeout 40m ./...
stop_dockerd
if [ -f e2e/package.json ]; then
  step "end-to-end MCP tests (TypeScript SDK, Claude Code, Codex, Gemini CLI, Inspector)" e2e
fi

printf '\n=== summary\n'
printf '%s\n' "${results[@]}"
exit $failed
