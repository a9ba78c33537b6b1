package cachestore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadyLayer: a layer last mounted in another boot is emptied, a marker
// left by a killed helper goes, and a layer of this boot is left as it is,
// its boot file not written again.
func TestReadyLayer(t *testing.T) {
	layer := filepath.Join(t.TempDir(), "layer")
	put := func(rel, data string) {
		t.Helper()
		p := filepath.Join(layer, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(layer, rel))
		return err == nil
	}
	if v, err := ReadyLayer(layer, nil); v || err != nil {
		t.Errorf("without a boot ID: volatile %v, %v; want a plain overlay", v, err)
	}

	put("upper/cached", "x")
	put(BootFile, "boot-1")
	put(VolatileMarker[1:], "")
	if v, err := ReadyLayer(layer, []byte("boot-2")); !v || err != nil {
		t.Fatalf("volatile %v, %v", v, err)
	}
	if exists("upper/cached") || exists(VolatileMarker[1:]) {
		t.Error("a layer of another boot was not emptied")
	}
	if b, _ := os.ReadFile(filepath.Join(layer, BootFile)); string(b) != "boot-2" {
		t.Errorf("boot file %q, want boot-2", b)
	}

	put("upper/cached", "x")
	put(VolatileMarker[1:], "")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(layer, BootFile), old, old)
	if v, err := ReadyLayer(layer, []byte("boot-2")); !v || err != nil {
		t.Fatalf("volatile %v, %v", v, err)
	}
	if !exists("upper/cached") || exists(VolatileMarker[1:]) {
		t.Error("a layer of this boot lost its cache, or kept a marker")
	}
	if fi, err := os.Stat(filepath.Join(layer, BootFile)); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("the boot file was written again: %v", err)
	}
}

// A layer not made yet is made, with its boot file, for a volatile overlay.
func TestReadyLayerMakesANewOne(t *testing.T) {
	layer := filepath.Join(t.TempDir(), "store", "layer")
	if v, err := ReadyLayer(layer, []byte("boot-1")); !v || err != nil {
		t.Fatalf("volatile %v, %v", v, err)
	}
	if b, err := os.ReadFile(filepath.Join(layer, BootFile)); err != nil || string(b) != "boot-1" {
		t.Errorf("boot file %q (%v), want boot-1", b, err)
	}
}
