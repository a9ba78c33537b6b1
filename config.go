package shellgate

import (
	"cmp"
	"fmt"
	"time"

	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/policy"
)

// Defaults for Config fields left zero.
const (
	DefaultTimeout        = 120 * time.Second // seed 001: timeout_ms default 120000
	MaxTimeout            = 600 * time.Second // seed 001: timeout_ms max 600000
	DefaultOutputLimit    = 50 * 1024         // seed 000: 50 KB, here for stdout and stderr together
	DefaultMaxOutputLimit = 512 * 1024        // what one call may ask for (max_output_bytes)
	DefaultSpillMax       = int64(1) << 30    // 1 GiB per spill file
	DefaultSpillTotal     = int64(2) << 30    // 2 GiB for one Gate's spill files together
	DefaultSpillRetention = 24 * time.Hour
	DefaultKillGrace      = 2 * time.Second
)

// Config is how a Gate runs commands. The zero value is usable: the project root is the
// current directory and every limit takes its default.
type Config struct {
	// Root is the project root; commands run inside it and may not leave it.
	// Default: the current directory.
	Root string
	// Shell overrides the shell program (a path or a name such as "sh").
	// Default: bash (--noprofile --norc), else sh; PowerShell, else cmd, on Windows.
	Shell string

	// DefaultTimeout applies when a request gives no timeout_ms; MaxTimeout caps it.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// KillGrace is how long a timed-out or cancelled command has between SIGTERM and
	// SIGKILL (at most 2s).
	KillGrace time.Duration

	// OutputLimit is the number of bytes of output kept in the envelope per call,
	// stdout and stderr together (head + tail of each), shared by what each needs.
	OutputLimit int
	// MaxOutputLimit caps Request.MaxOutputBytes. Default: DefaultMaxOutputLimit,
	// or OutputLimit if larger.
	MaxOutputLimit int
	// SpillDir receives the complete output of truncated or binary streams.
	// Default: a private directory under the system temp dir.
	SpillDir string
	// SpillMax caps one spill file; past it output is counted but not kept.
	SpillMax int64
	// SpillTotal caps one Gate's spill files together: the oldest are removed
	// to make room for a new one. Default: DefaultSpillTotal.
	SpillTotal int64
	// SpillRetention is how long spill files are kept before they are swept.
	SpillRetention time.Duration

	// TempDir is the directory commands get as TMPDIR (and TMP, TEMP), the one place
	// outside the root they may always write. Default: a private directory created by
	// New and removed by Close, so that commands cannot touch the system temp dir
	// that other programs share.
	TempDir string

	// Env adds variables to every command's environment. MYCODEAGENT=1 (seed
	// 001) is there unless Env gives MYCODEAGENT another value.
	Env map[string]string
	// KeepEnv names variables that look secret but should reach commands anyway.
	KeepEnv []string
	// KeepSecrets turns off stripping of secret-looking variables altogether.
	KeepSecrets bool

	// Policy decides which commands are allowed, asked about or refused.
	Policy policy.Settings
	// Sandbox confines commands with the kernel; on by default where it can be.
	Sandbox SandboxConfig
	// Network allows, with the network off, the domains commands may reach
	// through shellgate's proxy (allow-listed egress).
	Network NetworkConfig
	// Audit records every request in a log file; on by default.
	Audit AuditConfig
	// Sessions are the defaults of every Session (each MCP connection has one).
	Sessions SessionDefaults
	// Checkpoints keep the project root before each command that may write,
	// so that what it changed can be seen and undone; on by default.
	Checkpoints CheckpointConfig
	// PolicyFile is the configuration file where the user can allow a command
	// without being asked ([policy] allow), which an APPROVAL_REQUIRED error
	// names; config.Load sets it to the user file it reads, else the --config
	// file. Empty (a Config built in code, which reads no file), the error
	// names the allow patterns (Policy.Allow) instead of a file.
	PolicyFile string
}

// SessionDefaults configure the Gate's sessions.
type SessionDefaults struct {
	// KeepExports carries the variables a command exports (bash) into the
	// session's next commands, as cd is carried.
	KeepExports bool
	// Jobs bounds each session's jobs (zero: the jobs package's defaults).
	Jobs JobLimits
}

func fillDefaults(c *Config) error {
	c.DefaultTimeout = cmp.Or(c.DefaultTimeout, DefaultTimeout)
	c.MaxTimeout = cmp.Or(c.MaxTimeout, MaxTimeout)
	c.KillGrace = cmp.Or(c.KillGrace, DefaultKillGrace)
	c.OutputLimit = cmp.Or(c.OutputLimit, DefaultOutputLimit)
	c.MaxOutputLimit = cmp.Or(c.MaxOutputLimit, max(DefaultMaxOutputLimit, c.OutputLimit))
	if c.SpillDir == "" {
		c.SpillDir = output.DefaultSpillDir()
	}
	c.SpillMax = cmp.Or(c.SpillMax, DefaultSpillMax)
	c.SpillTotal = cmp.Or(c.SpillTotal, max(DefaultSpillTotal, c.SpillMax))
	c.SpillRetention = cmp.Or(c.SpillRetention, DefaultSpillRetention)
	switch {
	case c.DefaultTimeout < time.Millisecond || c.MaxTimeout < time.Millisecond:
		return fmt.Errorf("timeouts must be at least 1ms (default %s, max %s)", c.DefaultTimeout, c.MaxTimeout)
	case c.DefaultTimeout > c.MaxTimeout:
		return fmt.Errorf("default timeout %s is longer than the max timeout %s", c.DefaultTimeout, c.MaxTimeout)
	case c.KillGrace < 0 || c.KillGrace > 2*time.Second:
		return fmt.Errorf("kill grace %s must be between 0 and 2s", c.KillGrace)
	case c.OutputLimit < 0 || c.MaxOutputLimit < c.OutputLimit:
		return fmt.Errorf("output limit %d must be positive and at most the max output limit %d", c.OutputLimit, c.MaxOutputLimit)
	case c.SpillMax < 0:
		return fmt.Errorf("spill max %d must be positive", c.SpillMax)
	case c.SpillTotal < 0:
		return fmt.Errorf("spill total %d must be positive", c.SpillTotal)
	}
	return nil
}
