package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// manifest holds the exact permission bits of the files whose mode git's
// tree does not say: every regular file that is not 0644 (0755 when its
// owner may execute it), and under .git/objects not 0444 (git writes its
// objects read-only).
//
// It also lists the files a checkpoint did not keep, over
// Options.MaxFileSize (notkept.go), by their path in the pass: the work
// tree's (a nested repository's .git's among them) and .git's; and the
// ignored files it kept by a hard link (links.go).
type manifest struct {
	Work        map[string]uint32      `json:"work,omitempty"`
	Git         map[string]uint32      `json:"git,omitempty"`
	NotKeptWork map[string]notKeptFile `json:"not_kept_work,omitempty"`
	NotKeptGit  map[string]notKeptFile `json:"not_kept_git,omitempty"`
	// Linked lists the ignored files kept by a hard link in the store
	// (links.go), by their path in the work tree.
	Linked map[string]linkedFile `json:"linked,omitempty"`
	// LinkMax is the size up to which the checkpoint kept a big ignored
	// file by a link (linkMax); 0: none (an older build's, links off).
	LinkMax int64 `json:"link_max,omitempty"`
	// HardLinks are the files the checkpoint kept (as blobs) under more
	// than one name, hard links of one another: each the file's names, by
	// path in the root (".git/…" for the root's .git), sorted. Undo makes
	// them one file again (relinkNames).
	HardLinks [][]string `json:"hard_links,omitempty"`
	blob      string     // the id of its blob in the store, once written
}

// defaultPerm is the mode Restore gives a file of a tree when the manifest
// names none for it.
func defaultPerm(git bool, p string, exec bool) uint32 {
	switch {
	case exec:
		return 0o755
	case inObjects(git, p):
		return 0o444
	}
	return 0o644
}

// perm is the mode Restore gives path p of the work tree or .git.
func (m *manifest) perm(git bool, p string, exec bool) uint32 {
	tab := m.Work
	if git {
		tab = m.Git
	}
	if v, ok := tab[p]; ok {
		return v
	}
	return defaultPerm(git, p, exec)
}

// bytes is the manifest's blob: JSON with sorted keys, so equal manifests
// are one object.
func (m *manifest) bytes() []byte {
	b, _ := json.Marshal(m)
	return b
}

func (m *manifest) save(p string) error {
	return writeAtomic(p, m.bytes())
}

func loadManifest(p string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("checkpoint: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		// A damaged manifest: start over; the next checkpoints re-read modes
		// only of what changes, so drop the indexes too.
		return manifest{}, nil
	}
	return m, nil
}
