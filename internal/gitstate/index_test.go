package gitstate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lab makes a directory under /var/tmp (the sandbox hides the host's /tmp)
// that the test removes.
func lab(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "gitstate-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_TEST_SPLIT_INDEX=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
}

// repo makes a repository with files in directories, a gitlink and the
// flags this package clears, in the given index version and object format.
func repo(t testing.TB, version, format string) string {
	d := lab(t)
	git(t, d, "init", "-q", "--object-format="+format)
	for _, f := range []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "dir/sub/d.txt", "z/" + strings.Repeat("long", 1100)} {
		os.MkdirAll(filepath.Join(d, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(d, f), []byte(f), 0o644)
	}
	git(t, d, "add", ".")
	git(t, d, "commit", "-qm", "one")
	oid := strings.TrimSpace(git(t, d, "rev-parse", "HEAD"))
	git(t, d, "update-index", "--add", "--cacheinfo", "160000,"+oid+",dir/link")
	git(t, d, "update-index", "--skip-worktree", "dir/b.txt")
	git(t, d, "update-index", "--assume-unchanged", "a.txt")
	git(t, d, "write-tree")
	git(t, d, "update-index", "--index-version", version)
	return d
}

// Every index git writes (versions 2, 3 and 4, SHA-1 and SHA-256, with and
// without a checksum) parses to what git ls-files says, and encodes back to
// a file git reads the same.
func TestIndexAsGitWritesIt(t *testing.T) {
	requireGit(t)
	for _, format := range []string{"sha1", "sha256"} {
		for _, version := range []string{"2", "3", "4"} {
			for _, skipHash := range []bool{false, true} {
				t.Run(format+"-v"+version+map[bool]string{true: "-skiphash"}[skipHash], func(t *testing.T) {
					d := repo(t, version, format)
					data, err := os.ReadFile(filepath.Join(d, ".git/index"))
					if err != nil {
						t.Fatal(err)
					}
					if skipHash { // git 2.40's index.skipHash writes zeros for the checksum
						clear(data[len(data)-map[string]int{"sha1": 20, "sha256": 32}[format]:])
						os.WriteFile(filepath.Join(d, ".git/index"), data, 0o644)
						git(t, d, "ls-files") // git reads it
					}
					ix, err := Parse(data)
					if err != nil {
						t.Fatal(err)
					}
					wantHash := map[string]int{"sha1": 20, "sha256": 32}[format]
					if ix.HashSize != wantHash || ix.Version != max(uint32(version[0]-'0'), 3) { // skip-worktree needs 3
						t.Fatalf("hash %d version %d, want %d %s", ix.HashSize, ix.Version, wantHash, version)
					}
					if got, want := describe(ix), lsFiles(t, d); got != want {
						t.Fatalf("parsed:\n%s\ngit ls-files:\n%s", got, want)
					}
					scanned, err := Scan(data)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := describe(scanned), flagged(describe(ix)); got != want || want == "" {
						t.Fatalf("scanned:\n%s\nwant the flagged entries:\n%s", got, want)
					}
					out, err := ix.Encode(nil)
					if err != nil {
						t.Fatal(err)
					}
					if !skipHash && !bytes.Equal(out, data) && version != "4" {
						// git pads and orders as this does; only the caches it
						// drops may differ
						if ix2, _ := Parse(out); ix2 == nil || len(ix2.Extensions) == len(ix.Extensions) {
							t.Errorf("re-encoded index differs from git's")
						}
					}
					before := lsFiles(t, d)
					os.WriteFile(filepath.Join(d, ".git/index"), out, 0o644)
					if after := lsFiles(t, d); after != before {
						t.Fatalf("git reads the re-encoded index as\n%s\nnot\n%s", after, before)
					}
					if !skipHash { // git before 2.40 fsck wants a checksum
						git(t, d, "fsck", "--no-progress", "--cache")
					}
				})
			}
		}
	}
}

// flagged keeps the lines of describe's that Scan keeps.
func flagged(described string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(described, "\n") {
		if strings.HasPrefix(line, "S ") || strings.HasPrefix(line, "h ") || strings.Contains(line, " 160000 ") || strings.Contains(line, " 40000 ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// describe lists entries as lsFiles does.
func describe(ix *Index) string {
	var b strings.Builder
	for _, e := range ix.Entries {
		tag := "H"
		switch {
		case e.SkipWorktree:
			tag = "S"
		case e.AssumeValid:
			tag = "h"
		}
		b.WriteString(tag + " " + strconv.FormatUint(uint64(e.Mode), 8) + " " + e.Path + "\n")
	}
	return b.String()
}

// lsFiles is git's view: a tag (H, S skip-worktree, h assume-unchanged),
// the mode and the path.
func lsFiles(t testing.TB, d string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(git(t, d, "ls-files", "-v", "-s")), "\n") {
		f := strings.Fields(line) // TAG MODE OID STAGE\tPATH
		path := line[strings.IndexByte(line, '\t')+1:]
		b.WriteString(f[0] + " " + strings.TrimLeft(f[1], "0") + " " + path + "\n")
	}
	return b.String()
}

// Dropping entries and clearing flags gives an index git reads without them,
// whose cached trees for the dropped paths git rebuilds (write-tree names the
// tree of what is left).
func TestIndexDropAndClear(t *testing.T) {
	requireGit(t)
	for _, version := range []string{"2", "3", "4"} {
		for _, format := range []string{"sha1", "sha256"} {
			t.Run(format+"-v"+version, func(t *testing.T) {
				d := repo(t, version, format)
				data, _ := os.ReadFile(filepath.Join(d, ".git/index"))
				ix, err := Parse(data)
				if err != nil {
					t.Fatal(err)
				}
				var kept []Entry
				for _, e := range ix.Entries {
					e.AssumeValid, e.SkipWorktree = false, false
					if !e.Gitlink() {
						kept = append(kept, e)
					}
				}
				ix.Entries = kept
				out, err := ix.Encode([]string{"dir/link"})
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(d, ".git/index"), out, 0o644)
				got := lsFiles(t, d)
				if strings.Contains(got, "dir/link") || strings.Contains(got, "S ") || strings.Contains(got, "h ") {
					t.Fatalf("after the rewrite git lists\n%s", got)
				}
				tree := strings.TrimSpace(git(t, d, "write-tree"))
				if head := strings.TrimSpace(git(t, d, "rev-parse", "HEAD^{tree}")); tree != head {
					t.Fatalf("write-tree %s, want HEAD's tree %s: the cached tree still holds the gitlink", tree, head)
				}
				git(t, d, "fsck", "--no-progress", "--cache")
			})
		}
	}
}

// Damaged input is an error, never a panic; and what parses encodes to
// something that parses to the same entries.
func FuzzIndex(f *testing.F) {
	if _, err := exec.LookPath("git"); err == nil {
		for _, v := range []string{"2", "4"} {
			for _, format := range []string{"sha1", "sha256"} {
				d := repo(f, v, format)
				data, _ := os.ReadFile(filepath.Join(d, ".git/index"))
				f.Add(data)
			}
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := Parse(data)
		if err != nil && len(data) >= 12 && string(data[:4]) == "DIRC" {
			ix, err = parse(data, 20, false) // past the checksum, which mutations rarely keep
		}
		if err != nil {
			return
		}
		if sc, err := Scan(data); err == nil && describe(sc) != flagged(describe(ix)) {
			t.Fatalf("Scan kept\n%s\nnot the flagged entries of\n%s", describe(sc), describe(ix))
		}
		out, err := ix.Encode([]string{"dir/link"})
		if err != nil {
			return
		}
		ix2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-encoded index does not parse: %v", err)
		}
		if describe(ix) != describe(ix2) || len(ix.Entries) != len(ix2.Entries) {
			t.Fatalf("entries changed:\n%s\n%s", describe(ix), describe(ix2))
		}
	})
}

// runGit runs git and returns its output, failing or not.
func runGit(dir string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_EDITOR=true")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// bigIndex is an index of 20 000 entries in 200 directories, as git writes
// it.
func bigIndex(b *testing.B) []byte {
	requireGit(b)
	d := lab(b)
	git(b, d, "init", "-q")
	var list strings.Builder
	oid := strings.TrimSpace(git(b, d, "hash-object", "-w", "--stdin"))
	for i := range 20000 {
		list.WriteString("100644 " + oid + "\tsrc/pkg" + strconv.Itoa(i/100) + "/file" + strconv.Itoa(i) + ".go\n")
	}
	cmd := exec.Command("git", "update-index", "--index-info")
	cmd.Dir, cmd.Stdin = d, strings.NewReader(list.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	git(b, d, "write-tree")
	data, err := os.ReadFile(filepath.Join(d, ".git/index"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParse reads a large project's index, what the sandbox does after
// each command that wrote it.
func BenchmarkParse(b *testing.B) {
	data := bigIndex(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseEncode reads and rewrites it, what the sandbox does after a
// command that set a flag there.
func BenchmarkParseEncode(b *testing.B) {
	data := bigIndex(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		ix, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		ix.Entries[5].SkipWorktree = false
		if _, err := ix.Encode([]string{"src/pkg1/file100.go"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan looks at it as the sandbox does after each command that
// wrote it: only the flagged entries are kept.
func BenchmarkScan(b *testing.B) {
	data := bigIndex(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, err := Scan(data); err != nil {
			b.Fatal(err)
		}
	}
}
