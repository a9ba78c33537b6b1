package shellgate_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/envelope"
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

// codeBlocks returns the bodies of a Markdown document's fenced blocks of one
// language, in order.
func codeBlocks(t *testing.T, doc, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, block := range strings.Split(string(b), "```"+lang+"\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		blocks = append(blocks, body)
	}
	return blocks
}

// The README starts with the two commands a newcomer runs on a fresh machine: one
// runs a command through shellgate, one runs the tests; both name what is here.
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	rest = strings.TrimLeft(rest, "\n")
	if !strings.HasPrefix(rest, "```sh\n") {
		t.Fatalf("README.md does not start with a sh block after its title:\n%.200s", rest)
	}
	body, _, _ := strings.Cut(strings.TrimPrefix(rest, "```sh\n"), "```")
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "CGO_ENABLED=0 go run ./cmd/shellgate run -- ") ||
		!strings.HasPrefix(lines[1], "./scripts/test.sh ") {
		t.Fatalf("README.md's first block is not the two commands (run, test):\n%s", body)
	}
	if _, err := os.Stat("cmd/shellgate/main.go"); err != nil {
		t.Error(err)
	}
	if fi, err := os.Stat("scripts/test.sh"); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/test.sh is not an executable file: %v", err)
	}
}

// The README's envelope example has only fields the envelope has, in its order.
func TestReadmeEnvelopeExample(t *testing.T) {
	blocks := codeBlocks(t, "README.md", "json")
	if len(blocks) == 0 {
		t.Fatal("no json block in README.md")
	}
	dec := json.NewDecoder(strings.NewReader(blocks[0]))
	dec.DisallowUnknownFields()
	var env envelope.Envelope
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("README.md's envelope example: %v\n%s", err, blocks[0])
	}
	var last int
	for _, key := range []string{`"status"`, `"text"`, `"data"`, `"stats"`, `"context"`} {
		i := strings.Index(blocks[0], key)
		if i < last {
			t.Errorf("README.md's envelope example: %s is out of order", key)
		}
		last = i
	}
}

// The shellgate configuration shown in the README and docs/ loads as it stands: the
// strict loader would name any key that does not exist.
func TestDocsConfigExamplesLoad(t *testing.T) {
	docs, _ := filepath.Glob("docs/*.md")
	n := 0
	for _, doc := range append([]string{"README.md"}, docs...) {
		for i, block := range codeBlocks(t, doc, "toml") {
			if strings.Contains(block, "[mcp_servers.") { // Codex's configuration, not ours
				continue
			}
			n++
			dir := t.TempDir()
			file := filepath.Join(dir, "example.toml")
			if err := os.WriteFile(file, []byte(block), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := config.Load(config.LoadOptions{
				ConfigFile: file, Root: dir, NoUserConfig: true, Home: dir,
				LookupEnv: func(string) (string, bool) { return "", false },
			})
			if err != nil {
				t.Errorf("%s toml block %d does not load: %v\n%s", doc, i+1, err, block)
			}
		}
	}
	if n == 0 {
		t.Fatal("no shellgate configuration in README.md or docs/")
	}
}

// The README's error.code table has a row for every code the envelope package
// defines, and no other: a user reading an envelope's code finds what it means
// (SANDBOX_UNAVAILABLE, what --sandbox on answers on a machine without a
// layer, had no row).
func TestReadmeErrorCodes(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("envelope", "envelope.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					code, _ := strconv.Unquote(lit.Value)
					defined[code] = true
				}
			}
		}
	}
	if len(defined) < 10 {
		t.Fatalf("found %d codes in envelope/envelope.go, want every const of type Code", len(defined))
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| `error.code` | when |")
	if !ok {
		t.Fatal("README.md has no error.code table")
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if code, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "`"); ok && !strings.HasPrefix(line, "| ---") {
			listed[code] = true
		}
	}
	for code := range defined {
		if !listed[code] {
			t.Errorf("README.md's error.code table has no row for %s", code)
		}
	}
	for code := range listed {
		if !defined[code] {
			t.Errorf("README.md's error.code table lists %s, which envelope does not define", code)
		}
	}
}
