package config

import (
	"fmt"

	"github.com/shellgate/shellgate/internal/audit"
)

// auditTable is [audit]: the log of every request.
type auditTable struct {
	Enabled *bool   `toml:"enabled"`  // default true
	Path    *string `toml:"path"`     // default: the user state dir
	MaxSize any     `toml:"max_size"` // rotate past this size
	Keep    *int64  `toml:"keep"`     // rotated files kept
}

// maxAuditSize bounds one audit file: a line is a few hundred bytes.
const maxAuditSize = 1 << 30

// audit merges [audit]. The log is the user's record of what the agent did, so a
// project file may not turn it off, move it, or make it keep less.
func (m *merger) audit(f *parsedFile, trusted bool, dir string, ignore func(key, why string)) error {
	a := &f.cfg.Audit
	out := &m.cfg.Audit
	if a.Enabled != nil {
		if trusted || *a.Enabled {
			out.Off = !*a.Enabled
		} else {
			ignore("audit.enabled", "it turns the audit log off")
		}
	}
	if a.Path != nil {
		p, err := resolvePath(*a.Path, dir, m.home)
		if err != nil {
			return f.errorAt("audit.path", "%v", err)
		}
		if trusted {
			out.Path = p
		} else {
			ignore("audit.path", "it moves the audit log")
		}
	}
	if a.MaxSize != nil {
		n, err := parseSize(a.MaxSize)
		if err != nil {
			return f.errorAt("audit.max_size", "%v", err)
		}
		if n < audit.MinMaxBytes || n > maxAuditSize {
			return f.errorAt("audit.max_size", "%d bytes is out of range: want 1KB to 1GB", n)
		}
		if cur := orDefault(out.MaxBytes, audit.DefaultMaxBytes); !trusted && n < cur {
			ignore("audit.max_size", fmt.Sprintf("lowering it from %d bytes drops older lines sooner", cur))
		} else {
			out.MaxBytes = n
		}
	}
	if a.Keep != nil {
		n := *a.Keep
		if n < 1 || n > audit.MaxKeep {
			return f.errorAt("audit.keep", "%d is out of range: want 1 to %d", n, audit.MaxKeep)
		}
		if cur := orDefault(int64(out.Keep), audit.DefaultKeep); !trusted && n < cur {
			ignore("audit.keep", fmt.Sprintf("lowering it from %d drops older lines sooner", cur))
		} else {
			out.Keep = int(n)
		}
	}
	return nil
}

// orDefault is v, or def when v is zero (not set).
func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}
