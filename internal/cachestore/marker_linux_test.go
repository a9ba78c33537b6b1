package cachestore

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveMarker removes a volatile overlay's marker (its outer directory of
// mode 0), is content where there is none, and removes a link put in its
// place without following it.
func TestRemoveMarker(t *testing.T) {
	layer := t.TempDir()
	marker := filepath.Join(layer, VolatileMarker)
	if err := os.MkdirAll(filepath.Join(marker, "volatile"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(marker, 0); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMarker(layer); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(marker); !os.IsNotExist(err) {
		t.Errorf("the marker is left: %v", err)
	}
	if err := RemoveMarker(layer); err != nil {
		t.Errorf("no marker: %v", err)
	}
	target := t.TempDir()
	if err := os.Mkdir(filepath.Join(target, "volatile"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, marker); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMarker(layer); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(marker); !os.IsNotExist(err) {
		t.Errorf("the link is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "volatile")); err != nil {
		t.Errorf("the link was followed: %v", err)
	}
}
