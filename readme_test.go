package shellgate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's Go snippets that are whole programs compile as shown.
func TestReadmeSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for i, block := range strings.Split(string(readme), "```go\n")[1:] {
		src, _, _ := strings.Cut(block, "```")
		if !strings.HasPrefix(src, "package main") {
			continue
		}
		blocks++
		// Inside the module (testdata is not part of ./...), so it builds against this
		// checkout; removed afterwards, so nothing is left behind.
		dir, err := os.MkdirTemp("testdata", "readme-snippet-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README snippet %d does not compile: %v\n%s\n%s", i+1, err, out, src)
		}
	}
	if blocks == 0 {
		t.Fatal("no complete Go program in README.md")
	}
}
