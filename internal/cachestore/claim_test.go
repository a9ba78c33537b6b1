package cachestore

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Sessions of one project at once hold sets of layers no other holds: the
// project's own directory for the first, its further sets for those beside
// it, each taken again once released (a lock file left by a crashed holder
// holds nothing); the sets beyond KeptLayers are emptied as they are
// released, the kept ones keep what their sessions wrote.
func TestClaimLayers(t *testing.T) {
	project := t.TempDir()
	set := func(n int) string {
		if n == 0 {
			return project
		}
		return filepath.Join(project, "%"+strconv.Itoa(n))
	}
	// A crashed session's lock file, held by no one.
	if err := os.WriteFile(filepath.Join(project, layersLock), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var held []*Layers
	for n := range KeptLayers + 2 {
		l, err := ClaimLayers(project)
		if err != nil {
			t.Fatal(err)
		}
		if l.Dir() != set(n) {
			t.Fatalf("claim %d: %s, want %s", n, l.Dir(), set(n))
		}
		// As a session's overlay writes its cache layer.
		if err := os.MkdirAll(filepath.Join(l.Dir(), "home%.npm", "upper"), 0o700); err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	for _, n := range []int{1, KeptLayers} {
		if err := held[n].Release(); err != nil {
			t.Fatal(err)
		}
		if err := held[n].Release(); err != nil {
			t.Errorf("released again: %v", err)
		}
	}
	tests := []struct {
		set  int
		kept bool
	}{
		{0, true}, {1, true}, {KeptLayers - 1, true}, {KeptLayers, false}, {KeptLayers + 1, true}, // still held
	}
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(set(tt.set), "home%.npm"))
		if kept := err == nil; kept != tt.kept {
			t.Errorf("set %d's layer kept: %v, want %v", tt.set, kept, tt.kept)
		}
	}
	// The first released set goes to the next session.
	l, err := ClaimLayers(project)
	if err != nil || l.Dir() != set(1) {
		t.Fatalf("a claim after a release: %v %v, want %s", l, err, set(1))
	}
	held[1] = l
	for _, l := range held {
		l.Release()
	}
	if _, err := os.Stat(filepath.Join(set(KeptLayers+1), "home%.npm")); !os.IsNotExist(err) {
		t.Errorf("a set beyond the kept ones is left full: %v", err)
	}
	if l, err := ClaimLayers(project); err != nil || l.Dir() != project {
		t.Errorf("once all are released: %v %v, want the project's own", l, err)
	} else {
		l.Release()
	}
}

// A claim where no lock file can be made says so, and does not go on making
// sets.
func TestClaimLayersUnwritable(t *testing.T) {
	project := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(project, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ClaimLayers(project); err == nil {
		t.Fatal("a claim in a file succeeded")
	}
}

// Sessions starting at once each hold a set no other holds.
func TestClaimLayersAtOnce(t *testing.T) {
	project := t.TempDir()
	const sessions = KeptLayers + 3
	got := make(chan *Layers, sessions)
	for range sessions {
		go func() {
			l, err := ClaimLayers(project)
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
	}
	dirs := map[string]bool{}
	for range sessions {
		if l := <-got; l != nil {
			if dirs[l.Dir()] {
				t.Errorf("two sessions hold %s", l.Dir())
			}
			dirs[l.Dir()] = true
			defer l.Release()
		}
	}
}

// A session killed while it held a set leaves its lock file, which holds
// nothing: the next session takes the set.
func TestClaimLayersAfterACrash(t *testing.T) {
	if project := os.Getenv("CACHESTORE_TEST_CLAIM"); project != "" { // the session killed
		l, err := ClaimLayers(project)
		if err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString(l.Dir() + "\n")
		os.Stdin.Read(make([]byte, 1)) // until killed
		os.Exit(0)
	}
	project := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestClaimLayersAfterACrash$")
	cmd.Env = append(os.Environ(), "CACHESTORE_TEST_CLAIM="+project)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != project+"\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the first session holds %q, want %s", line, project)
	}
	if l, err := ClaimLayers(project); err != nil || l.Dir() == project {
		t.Errorf("beside a live session: %v %v, want a set of its own", l, err)
	} else {
		l.Release()
	}
	cmd.Process.Kill()
	cmd.Wait()
	if l, err := ClaimLayers(project); err != nil || l.Dir() != project {
		t.Errorf("after the session was killed: %v %v, want the project's own", l, err)
	} else {
		l.Release()
	}
}
