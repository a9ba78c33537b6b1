// Package corpus reads the attack and legitimate command corpus in testdata/corpus,
// for the tests of every package: one loader, and a missing file fails the test
// rather than skipping it, so that a clone that lost the corpus cannot pass quietly.
package corpus

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Row is one line of a corpus file: its line number and its fields by column name.
type Row struct {
	Line   int
	Fields map[string]string
}

// Command is the row's command with <NL> turned into newlines; placeholders such as
// $ROOT are left for the caller, who knows the paths.
func (r Row) Command() string { return strings.ReplaceAll(r.Fields["command"], "<NL>", "\n") }

// Dir is the corpus directory, testdata/corpus at the repository root.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpus")
}

// Read returns the rows of name (e.g. "attacks.tsv"), failing tb if the file is
// missing, unreadable or empty.
func Read(tb testing.TB, name string) []Row {
	tb.Helper()
	path := filepath.Join(Dir(), name)
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("corpus: %v (the corpus is part of the repository: restore testdata/corpus, or run scripts/sync-corpus.sh)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var header []string
	var rows []Row
	for n := 1; sc.Scan(); n++ {
		cols := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = cols
			continue
		}
		r := Row{Line: n, Fields: make(map[string]string, len(header))}
		for i, h := range header {
			if i < len(cols) {
				r.Fields[h] = cols[i]
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("corpus: %s: %v", path, err)
	}
	if len(rows) == 0 {
		tb.Fatalf("corpus: %s has no rows", path)
	}
	return rows
}
