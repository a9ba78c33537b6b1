package helper

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/protect"
)

// BenchmarkProtectLook is one of the two looks the helper makes around each
// command (mounter.protect), in a root of a few entries with shellgate's
// default protected paths, none of them there: what each look costs when
// nothing appeared, as after nearly every command.
//
//	go test -run '^$' -bench ProtectLook ./internal/sandbox/helper
func BenchmarkProtectLook(b *testing.B) {
	root, err := os.MkdirTemp("/var/tmp", "shellgate-look-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	for _, n := range []string{"src", "docs", "README.md", "go.mod", "go.sum", "main.go"} {
		if err := os.WriteFile(filepath.Join(root, n), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	spec := &Spec{Writable: []string{root}, Patterns: protect.RootPatterns()}
	for _, p := range protect.RootPaths() {
		spec.Protected = append(spec.Protected, filepath.Join(root, p))
	}
	m := newMounter(spec)
	m.ready = true
	b.ReportAllocs()
	for b.Loop() {
		if now, moved, err := m.protect(func() bool { return false }, nil); len(now)+len(moved) > 0 || err != nil {
			b.Fatal(now, moved, err)
		}
	}
}
