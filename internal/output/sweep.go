package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shellgate/shellgate/internal/held"
)

// Sweep removes the spill files in dir ("" means DefaultSpillDir()) last modified more
// than olderThan ago. Files that are not spill files, and anything that is not a
// regular file, are left alone. A missing dir is not an error: nothing has spilled.
func Sweep(dir string, olderThan time.Duration) error {
	return sweep(dir, olderThan, false)
}

// sweep is Sweep; inSession: dir is a Gate's own directory (isSpillName).
func sweep(dir string, olderThan time.Duration, inSession bool) error {
	if olderThan < 0 {
		return fmt.Errorf("output: sweep: negative retention %v", olderThan)
	}
	if dir == "" {
		dir = DefaultSpillDir()
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output: sweep: %w", err)
	}
	cutoff := time.Now().Add(-olderThan)
	var errs []error
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), SessionDirPrefix) {
			// A session's own directory: its old files, then itself once
			// empty and its owner gone.
			sub := filepath.Join(dir, e.Name())
			if err := sweep(sub, olderThan, true); err != nil {
				errs = append(errs, err)
			}
			// Where a holder cannot be told (no flock), by age alone.
			if info, err := e.Info(); err == nil && (held.Unheld(sub, info.ModTime()) || !held.Supported && info.ModTime().Before(cutoff)) {
				os.Remove(sub) // fails while it holds anything
			}
			continue
		}
		if !e.Type().IsRegular() || !isSpillName(e.Name(), inSession) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue // gone already, or still within retention
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("output: sweep: %w", err)
	}
	return nil
}
