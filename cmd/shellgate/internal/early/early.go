// Package early starts the sandbox helper of a one-shot `shellgate run` or
// `shellgate exec` from its init function, so that the helper's own start (a
// fork into new namespaces, an exec, the Go runtime and every package's
// initialisation) overlaps with shellgate's instead of following it. The
// shellgate command imports it; package sandbox adopts the helper when the
// first command needs its session, and main discards it otherwise (a refused
// command, no sandbox after all, a usage error): see internal/helperstart.
//
// The arguments are only glanced at, never trusted: the helper gets nothing but
// its namespaces until package sandbox sends the spec the configuration calls
// for, and one whose network namespace does not fit that spec is discarded.
package early

import (
	"os"
	"strings"

	"github.com/shellgate/shellgate/internal/helperstart"
)

func init() {
	if Wanted(os.Args, os.Getenv("BASH_ALLOW_NETWORK")) {
		helperstart.Prestart(false)
	}
}

// Wanted reports whether a shellgate started with args will likely run a
// command in a sandbox whose network is off. A wrong guess costs time, not
// safety.
func Wanted(args []string, allowNetwork string) bool {
	if len(args) == 0 || allowNetwork != "" {
		return false
	}
	words := args[1:]
	// Not path/filepath, which is initialised late (see helperstart).
	if base := args[0][strings.LastIndexByte(args[0], '/')+1:]; base != "shellgate-exec" {
		if len(words) == 0 || words[0] != "run" && words[0] != "exec" {
			return false
		}
		words = words[1:]
	}
	for _, w := range words {
		if w == "--" {
			break
		}
		name, value, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		switch {
		case name == "h" || name == "help" || name == "allow-network" && value != "false":
			return false
		case w == "off" || w == "full-access" || value == "off" || value == "full-access":
			return false
		}
	}
	return true
}
