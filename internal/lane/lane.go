// Package lane sorts the tests in two speeds. `go test -short ./...` is the
// fast lane: plans, tables, parsers and the policy's corpora, under a minute.
// The live suites (real sandbox sessions, the sandbox corpora run for real,
// undo of real repositories, servers driven end to end) run without -short,
// in CI's own step.
package lane

import "testing"

// Live skips t in the fast lane (-short).
func Live(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("live test: runs without -short")
	}
}
