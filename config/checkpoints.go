package config

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint"
)

// checkpointsTable is [checkpoints]: the project kept before each command.
type checkpointsTable struct {
	Enabled        *bool    `toml:"enabled"`                    // default true
	Dir            *string  `toml:"dir"`                        // default: the user state dir
	MaxSize        any      `toml:"max_size"`                   // per project, "2GB"
	MaxAge         *string  `toml:"max_age"`                    // "168h"
	MaxCount       *int64   `toml:"max_count"`                  // commands remembered
	IgnoredMaxSize any      `toml:"ignored_max_size"`           // ignored files kept up to this size
	KeepIgnored    []string `toml:"keep_ignored"`               // ignored files kept whatever their size
	MaxFileSize    any      `toml:"max_file_size"`              // files over it are not read, "256MB"
	LinkMaxSize    any      `toml:"ignored_link_max_size"`      // ignored files kept by a hard link up to it, "256MB"; "0"/"off": none
	LinkCopyMax    any      `toml:"ignored_link_copy_max_size"` // such files copied before a write in the sandbox up to it, "16MB"; "0"/"off": none
	KeeperIdle     *string  `toml:"keeper_idle"`                // "10m"; "0" or "off": no keeper
}

// Bounds on [checkpoints].
const (
	maxCheckpointCount = 100000
	maxCheckpointAge   = 10 * 365 * 24 * time.Hour
	maxIgnoredSize     = 1 << 30
	minMaxFileSize     = 1 << 20
	maxMaxFileSize     = 64 << 30
	maxKeeperIdle      = 24 * time.Hour
)

// checkpoints merges [checkpoints]. They are the user's way back from what an
// agent did, so a project file may not turn them off, move them, or make them
// keep less.
func (m *merger) checkpoints(f *parsedFile, trusted bool, dir string, ignore func(key, why string)) error {
	c := &f.cfg.Checkpoints
	out := &m.cfg.Checkpoints
	if c.Enabled != nil {
		if trusted || *c.Enabled {
			out.Off = !*c.Enabled
		} else {
			ignore("checkpoints.enabled", "it turns checkpoints off")
		}
	}
	if c.Dir != nil {
		p, err := resolvePath(*c.Dir, dir, m.home)
		if err != nil {
			return f.errorAt("checkpoints.dir", "%v", err)
		}
		if trusted {
			out.Dir = p
		} else {
			ignore("checkpoints.dir", "it moves the checkpoints")
		}
	}
	if err := m.checkpointBounds(f, trusted, ignore); err != nil {
		return err
	}
	if c.KeeperIdle != nil {
		d := time.Duration(-1) // none
		if v := *c.KeeperIdle; v != "0" && v != "off" {
			var err error
			if d, err = parseDuration(v); err != nil {
				return f.errorAt("checkpoints.keeper_idle", "%v", err)
			}
			if d < time.Second || d > maxKeeperIdle {
				return f.errorAt("checkpoints.keeper_idle", "%s is out of range: want 1s to %s, or \"0\" for no keeper", envelope.Duration(d), envelope.Duration(maxKeeperIdle))
			}
		}
		if trusted || d < 0 {
			out.KeeperIdle = d
		} else {
			ignore("checkpoints.keeper_idle", "it keeps a process running")
		}
	}
	if c.IgnoredMaxSize != nil {
		n, err := parseSize(c.IgnoredMaxSize)
		if err != nil {
			return f.errorAt("checkpoints.ignored_max_size", "%v", err)
		}
		if n > maxIgnoredSize {
			return f.errorAt("checkpoints.ignored_max_size", "%d bytes is out of range: want at most 1GB", n)
		}
		if n == 0 {
			n = -1 // none; 0 is the default in CheckpointConfig
		}
		cur := orDefault(out.IgnoredMaxSize, checkpoint.DefaultIgnoredMaxSize)
		if !trusted && (n < cur || cur < 0) {
			ignore("checkpoints.ignored_max_size", "lowering it keeps fewer ignored files")
		} else {
			out.IgnoredMaxSize = n
		}
	}
	if c.MaxFileSize != nil {
		n, err := parseSize(c.MaxFileSize)
		if err != nil {
			return f.errorAt("checkpoints.max_file_size", "%v", err)
		}
		if n < minMaxFileSize || n > maxMaxFileSize {
			return f.errorAt("checkpoints.max_file_size", "%d bytes is out of range: want 1MB to 64GB", n)
		}
		// Lower, checkpoints keep less; higher, a file the project holds
		// (a sparse terabyte a command made) stalls every checkpoint.
		if trusted {
			out.MaxFileSize = n
		} else if n != orDefault(out.MaxFileSize, checkpoint.DefaultMaxFileSize) {
			ignore("checkpoints.max_file_size", "lower, checkpoints keep less; higher, a big file in the project stalls each checkpoint")
		}
	}
	if c.LinkMaxSize != nil {
		n, err := offableSize(f, "checkpoints.ignored_link_max_size", c.LinkMaxSize, "no links")
		if err != nil {
			return err
		}
		// Lower, checkpoints keep less; higher, each write-open of such a
		// file in the sandbox copies more.
		if trusted {
			out.LinkMaxSize = n
		} else if n != orDefault(out.LinkMaxSize, checkpoint.DefaultLinkMaxSize) {
			ignore("checkpoints.ignored_link_max_size", "lower, checkpoints keep less; higher, a command writing such a file in the sandbox copies more")
		}
	}
	if c.LinkCopyMax != nil {
		n, err := offableSize(f, "checkpoints.ignored_link_copy_max_size", c.LinkCopyMax, "to copy none")
		if err != nil {
			return err
		}
		// Lower, undo puts back fewer writes; higher, each write-open of
		// such a file in the sandbox copies more.
		if trusted {
			out.LinkCopyMaxSize = n
		} else if n != orDefault(out.LinkCopyMaxSize, checkpoint.DefaultLinkCopyMaxSize) {
			ignore("checkpoints.ignored_link_copy_max_size", "lower, undo puts back fewer writes; higher, a command writing such a file in the sandbox copies more")
		}
	}
	if c.KeepIgnored != nil {
		for i, p := range c.KeepIgnored {
			if _, err := filepath.Match(p, ""); err != nil || p == "" {
				return f.errorAt("checkpoints.keep_ignored", "pattern %d (%q) is not a valid file name pattern", i+1, p)
			}
		}
		cur := out.KeepIgnored
		if cur == nil {
			cur = checkpoint.DefaultKeepIgnored
		}
		if trusted {
			out.KeepIgnored = slices.Clone(c.KeepIgnored)
		} else {
			// A project may keep more, never less.
			merged := slices.Clone(cur)
			for _, p := range c.KeepIgnored {
				if !slices.Contains(merged, p) {
					merged = append(merged, p)
				}
			}
			out.KeepIgnored = merged
		}
	}
	return nil
}

// checkpointBounds merges max_size, max_age and max_count: a project file
// may raise them (keep more), not lower them.
func (m *merger) checkpointBounds(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	c := &f.cfg.Checkpoints
	out := &m.cfg.Checkpoints
	if c.MaxSize != nil {
		n, err := parseSize(c.MaxSize)
		if err != nil {
			return f.errorAt("checkpoints.max_size", "%v", err)
		}
		if n < 1<<20 {
			return f.errorAt("checkpoints.max_size", "%d bytes is too small: want at least 1MB", n)
		}
		if cur := orDefault(out.MaxSize, checkpoint.DefaultMaxSize); !trusted && n < cur {
			ignore("checkpoints.max_size", "lowering it drops older checkpoints sooner")
		} else {
			out.MaxSize = n
		}
	}
	if c.MaxAge != nil {
		d, err := parseDuration(*c.MaxAge)
		if err != nil {
			return f.errorAt("checkpoints.max_age", "%v", err)
		}
		if d < time.Minute || d > maxCheckpointAge {
			return f.errorAt("checkpoints.max_age", "%s is out of range: want 1m to %s", envelope.Duration(d), envelope.Duration(maxCheckpointAge))
		}
		if cur := time.Duration(orDefault(int64(out.MaxAge), int64(checkpoint.DefaultMaxAge))); !trusted && d < cur {
			ignore("checkpoints.max_age", "lowering it drops older checkpoints sooner")
		} else {
			out.MaxAge = d
		}
	}
	if c.MaxCount != nil {
		n := *c.MaxCount
		if n < 1 || n > maxCheckpointCount {
			return f.errorAt("checkpoints.max_count", "%d is out of range: want 1 to %d", n, maxCheckpointCount)
		}
		if cur := orDefault(int64(out.MaxCount), checkpoint.DefaultMaxCount); !trusted && n < cur {
			ignore("checkpoints.max_count", "lowering it drops older checkpoints sooner")
		} else {
			out.MaxCount = int(n)
		}
	}
	return nil
}

// offableSize reads a size key up to 64GB that "0" or "off" turns off: -1
// then (0 is a CheckpointConfig's default). off says what "0" means in the
// range error.
func offableSize(f *parsedFile, key string, v any, off string) (int64, error) {
	if s, ok := v.(string); ok && s == "off" {
		return -1, nil
	}
	n, err := parseSize(v)
	if err != nil {
		return 0, f.errorAt(key, "%v", err)
	}
	if n > maxMaxFileSize {
		return 0, f.errorAt(key, "%d bytes is out of range: want at most 64GB, or \"0\" %s", n, off)
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}
