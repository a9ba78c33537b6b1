package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// Where command names are folded to lower case (macOS, Windows), the name
// tables must hold lower-case keys too.
func init() {
	if !analysis.FoldsNames {
		return
	}
	for _, m := range []map[string]bool{privileged, interpreters, networkClients, diskTools, powerTools, escapeTools} {
		for k, v := range m {
			m[strings.ToLower(k)] = v
		}
	}
	for _, m := range []map[string]string{dedicatedTools, interactiveTools, repls} {
		for k, v := range m {
			m[strings.ToLower(k)] = v
		}
	}
}
