package corpus

import (
	"testing"
)

func TestRead(t *testing.T) {
	rows := Read(t, "attacks.tsv")
	if len(rows) < 100 || rows[0].Line != 2 || rows[0].Fields["category"] == "" || rows[0].Command() == "" {
		t.Errorf("%d rows, first %+v", len(rows), rows[0])
	}
	if legit := Read(t, "legit.tsv"); len(legit) < 20 {
		t.Errorf("%d legit rows", len(legit))
	}
}

// A missing file fails the test; it is never skipped.
func TestReadMissingFails(t *testing.T) {
	ft := &fakeTB{TB: t}
	func() {
		defer func() { recover() }()
		Read(ft, "no-such.tsv")
	}()
	if !ft.failed || ft.skipped {
		t.Errorf("failed %v, skipped %v", ft.failed, ft.skipped)
	}
}

// fakeTB records a fatal failure instead of ending the real test.
type fakeTB struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
func (f *fakeTB) Skipf(string, ...any) { f.skipped = true; panic("skip") }
