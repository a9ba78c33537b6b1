package shellgate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// The Go snippets of the README and docs/ that are whole programs compile as shown
// (the library's example is in docs/library.md).
func TestDocsSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	docs, _ := filepath.Glob("docs/*.md")
	blocks := 0
	for _, doc := range append([]string{"README.md"}, docs...) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range strings.Split(string(text), "```go\n")[1:] {
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
				t.Errorf("%s snippet %d does not compile: %v\n%s\n%s", doc, i+1, err, out, src)
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no complete Go program in README.md or docs/")
	}
}

// Every link in the README and docs/ leads to a file of this repository (and to a
// heading there, where it names one) or to a public address, and no section of a
// document outside it is cited (§): an outsider can open everything the
// documentation points to.
func TestDocsLinksResolve(t *testing.T) {
	docs, _ := filepath.Glob("docs/*.md")
	for _, doc := range append([]string{"README.md", "testdata/corpus/README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if i := strings.Index(text, "§"); i >= 0 {
			t.Errorf("%s cites a section of a document outside the repository: %q", doc, text[max(0, i-40):min(len(text), i+20)])
		}
		for _, part := range strings.Split(text, "](")[1:] {
			target, _, ok := strings.Cut(part, ")")
			if !ok || strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "#") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), file)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", doc, file)
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(doc), file))
				if err != nil {
					t.Fatal(err)
				}
				if !headingAnchors(string(b))[anchor] {
					t.Errorf("%s links to %s, which has no heading #%s", doc, file, anchor)
				}
			}
		}
		// Links within the document: [text](#anchor).
		anchors := headingAnchors(text)
		for _, part := range strings.Split(text, "](#")[1:] {
			anchor, _, ok := strings.Cut(part, ")")
			if ok && !anchors[anchor] {
				t.Errorf("%s links to #%s, which is none of its headings", doc, anchor)
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives a Markdown document's headings:
// lower case, spaces as hyphens, punctuation other than - and _ dropped, a repeated
// one suffixed -1, -2 … Headings inside fenced code blocks are not headings.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		a := slug.String()
		for n := 1; anchors[a]; n++ {
			a = fmt.Sprintf("%s-%d", slug.String(), n)
		}
		anchors[a] = true
	}
	return anchors
}
