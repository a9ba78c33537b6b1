package checkpoint

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// TestLinkFileNamesAtOnce: two names of one big ignored file, linked into
// the store at once by two of a checkpoint's readers, are both kept by the
// one link: neither is recorded as not kept because the other's link came
// between its look and its link (TestUndoLinkedNamesStayOneFile failed so
// once at load).
func TestLinkFileNamesAtOnce(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, "head -c 300000 /dev/urandom > data.log && ln data.log alias.log")
	s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := range 300 {
		os.RemoveAll(s.linksDir())
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i, name := range []string{"data.log", "alias.log"} {
			wg.Go(func() {
				<-start
				_, errs[i] = s.linkFile(filepath.Join(root, name))
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: name %d: %v", round, i, err)
			}
		}
	}
}
