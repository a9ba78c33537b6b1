package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"
)

// With both the Claude Code hook and the prefix installed, an "ask" is put to the
// user in Claude Code's own permission dialog, but shellgate exec, which then runs
// the command, cannot see the answer. So the hook leaves a note that it asked about
// a command, Claude Code runs the command only if the user approved it, and exec
// takes the note, once, as that approval. A note left by a declined command expires.
// Notes live in the user's cache directory, outside any project, where the policy
// keeps commands from writing.

// askedFor is how long a note stays good: Claude Code's dialog waits for the user.
const askedFor = 10 * time.Minute

func askedPath(root, command string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(root + "\x00" + command))
	return filepath.Join(dir, "shellgate", "asked", hex.EncodeToString(h[:])), nil
}

// NoteAsked records that the user is being asked about command in root, and
// forgets notes that expired.
func NoteAsked(root, command string) error {
	path, err := askedPath(root, command)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if old, err := os.ReadDir(dir); err == nil {
		for _, e := range old {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > askedFor {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return os.WriteFile(path, nil, 0o600)
}

// TakeAsked reports whether the user was asked about command in root within
// askedFor, and forgets it: one note approves one run.
func TakeAsked(root, command string) bool {
	path, err := askedPath(root, command)
	if err != nil {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// Whoever removes it takes it: two runs cannot both use one note.
	return os.Remove(path) == nil && time.Since(fi.ModTime()) <= askedFor
}
