package policy

import (
	"maps"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// names is a table of command names as looked up: where names are folded to lower
// case (macOS, Windows), every key is also there in lower case.
func names[V any](m map[string]V) map[string]V {
	if !analysis.FoldsNames {
		return m
	}
	folded := maps.Clone(m)
	for k, v := range m {
		folded[strings.ToLower(k)] = v
	}
	return folded
}
