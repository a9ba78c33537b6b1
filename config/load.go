package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/hint"
)

// ProjectFileName is the project file, looked for in the project root.
const ProjectFileName = ".shellgate.toml"

// LoadOptions say where to look. The zero value loads the user file and the project file
// of the current directory.
type LoadOptions struct {
	// ConfigFile is the --config file, if any. It must exist.
	ConfigFile string
	// Root is the --root flag, if any: it wins over root in any file. Relative to the
	// current directory.
	Root string
	// UserConfig is the user file; "" means DefaultUserConfig(). It may be missing.
	UserConfig string
	// NoUserConfig skips the user file (hermetic tests, CI).
	NoUserConfig bool
	// TrustProject lets the project file loosen policy, as trust_project_config = true.
	TrustProject bool
	// Home expands ~ in paths; "" means os.UserHomeDir().
	Home string
	// LookupEnv reads the environment (BASH_ALLOW_NETWORK); nil means os.LookupEnv.
	LookupEnv func(key string) (string, bool)
}

// Layer names where a file sits in the merge order.
type Layer string

const (
	LayerUser     Layer = "user"
	LayerProject  Layer = "project"
	LayerExplicit Layer = "config" // the --config file
)

// Source is one file that was read.
type Source struct {
	Path    string
	Layer   Layer
	Trusted bool // false for a project file that may only tighten
}

// Sources says what went into a Config.
type Sources struct {
	Files []Source
	// Warnings are settings that were ignored, each naming file, line and key: loosening
	// settings in an untrusted project file.
	Warnings []ConfigError
	// NetworkFromEnv is set when BASH_ALLOW_NETWORK=true turned the network on.
	NetworkFromEnv bool
}

// DefaultUserConfig returns os.UserConfigDir()/shellgate/config.toml, or "" if the system
// has no user configuration directory.
func DefaultUserConfig() string { return hint.UserConfigFile() }

// Load reads the configuration files opts points at and merges them over the built-in
// defaults (see the package documentation for the order and the trust rules). The
// returned Config has an absolute, existing Root and every limit filled in.
func Load(opts LoadOptions) (shellgate.Config, Sources, error) {
	var src Sources
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir() // only needed if a path uses ~; resolvePath says so then
	}

	user, explicit, err := readOwnFiles(opts)
	if err != nil {
		return shellgate.Config{}, src, err
	}
	root, err := findRoot(opts.Root, home, explicit, user)
	if err != nil {
		return shellgate.Config{}, src, err
	}

	trust := opts.TrustProject
	for _, f := range []*parsedFile{user, explicit} {
		if f != nil && f.cfg.TrustProjectConfig != nil && *f.cfg.TrustProjectConfig {
			trust = true
		}
	}
	project, err := readFile(filepath.Join(root, ProjectFileName), false)
	if err != nil {
		return shellgate.Config{}, src, err
	}
	if project != nil && explicit != nil && sameFile(project.abs, explicit.abs) {
		project = nil // --config .shellgate.toml: read once, as the explicit file it is
	}
	if project != nil {
		for _, key := range []string{"root", "trust_project_config"} {
			if project.keys.line(key) > 0 {
				return shellgate.Config{}, src, project.errorAt(key, "only allowed in the user file or the --config file, not in the project file")
			}
		}
	}

	m := merger{cfg: defaults(root), home: home, src: &src}
	layers := []struct {
		f       *parsedFile
		layer   Layer
		trusted bool
	}{{user, LayerUser, true}, {project, LayerProject, trust}, {explicit, LayerExplicit, true}}
	for _, l := range layers {
		if l.f == nil {
			continue
		}
		src.Files = append(src.Files, Source{Path: l.f.abs, Layer: l.layer, Trusted: l.trusted})
		if err := m.apply(l.f, l.trusted); err != nil {
			return shellgate.Config{}, src, err
		}
	}
	if err := m.finish(); err != nil {
		return shellgate.Config{}, src, err
	}

	// Where an APPROVAL_REQUIRED error tells the user to allow a command: the
	// user file (read whether it exists yet or not), else the --config file.
	if f := userFile(opts); f != "" {
		m.cfg.PolicyFile = f
	} else if explicit != nil {
		m.cfg.PolicyFile = explicit.abs
	}
	if src.NetworkFromEnv, err = networkFromEnv(lookup, &m.cfg); err != nil {
		return shellgate.Config{}, src, err
	}
	return m.cfg, src, nil
}

// readOwnFiles reads the user's file (unless opts say not to) and the
// --config file, either nil where there is none.
func readOwnFiles(opts LoadOptions) (user, explicit *parsedFile, err error) {
	if path := userFile(opts); path != "" {
		if user, err = readFile(path, false); err != nil {
			return nil, nil, err
		}
	}
	if opts.ConfigFile != "" {
		if explicit, err = readFile(opts.ConfigFile, true); err != nil {
			return nil, nil, err
		}
	}
	return user, explicit, nil
}

// userFile is the user file opts say to read, "" for none.
func userFile(opts LoadOptions) string {
	if opts.NoUserConfig {
		return ""
	}
	if opts.UserConfig != "" {
		return opts.UserConfig
	}
	return DefaultUserConfig()
}

// networkFromEnv turns the network on where BASH_ALLOW_NETWORK (seed 001)
// says so and the files did not, and reports whether it did.
func networkFromEnv(lookup func(string) (string, bool), cfg *shellgate.Config) (bool, error) {
	v, ok := lookup("BASH_ALLOW_NETWORK")
	if !ok || v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("environment: BASH_ALLOW_NETWORK=%q: want true or false", v)
	}
	if on && !cfg.Policy.Network {
		cfg.Policy.Network = true
		return true, nil
	}
	return false, nil
}

// defaults is the built-in layer: every limit at its documented default.
func defaults(root string) shellgate.Config {
	return shellgate.Config{
		Root:           root,
		DefaultTimeout: shellgate.DefaultTimeout,
		MaxTimeout:     shellgate.MaxTimeout,
		KillGrace:      shellgate.DefaultKillGrace,
		OutputLimit:    shellgate.DefaultOutputLimit,
		SpillMax:       shellgate.DefaultSpillMax,
		SpillTotal:     shellgate.DefaultSpillTotal,
		SpillRetention: shellgate.DefaultSpillRetention,
	}
}

// readFile reads and parses path. A missing file is nil, nil unless required.
// Only a regular file (symlinks followed) is read, and no more than maxFileSize of
// it: a FIFO or a link to /dev/zero in a cloned project must not hang every start.
func readFile(path string, required bool) (*parsedFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !required:
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config file %s does not exist (given with --config)", path)
	case err != nil:
		return nil, fmt.Errorf("config file %s: %w", path, err)
	case info.IsDir():
		return nil, fmt.Errorf("config file %s is a directory, not a TOML file", path)
	}
	if err := regular(path, info); err != nil {
		return nil, err
	}
	data, err := readRegular(path, abs)
	if err != nil {
		return nil, err
	}
	pf, err := parseFile(path, data)
	if err != nil {
		return nil, err
	}
	pf.abs = abs
	return pf, nil
}

// regular refuses what is not a regular file, or is larger than maxFileSize.
func regular(path string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("config file %s is not a regular file (%s); shellgate reads only regular files", path, fileType(info.Mode()))
	}
	if info.Size() > maxFileSize {
		return fmt.Errorf("%s: file is larger than %d bytes; is it really a shellgate configuration?", path, maxFileSize)
	}
	return nil
}

// readRegular reads abs if it is (still, once open) a regular file, at most
// maxFileSize+1 bytes of it.
func readRegular(path, abs string) ([]byte, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if err := regular(path, info); err != nil { // replaced since the first look
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return data, nil // parseFile refuses more than maxFileSize
}

// fileType names a file's type for an error message.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return m.Type().String()
}

func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// findRoot picks the project root: the --root flag, else root in the --config file, else
// in the user file, else the current directory. It must be an existing directory.
func findRoot(flag, home string, files ...*parsedFile) (string, error) {
	root, from := "", "--root"
	if flag != "" {
		abs, err := filepath.Abs(flag)
		if err != nil {
			return "", fmt.Errorf("--root %s: %w", flag, err)
		}
		root = abs
	} else {
		for _, f := range files {
			if f == nil || f.cfg.Root == nil {
				continue
			}
			abs, err := resolvePath(*f.cfg.Root, filepath.Dir(f.abs), home)
			if err != nil {
				return "", f.errorAt("root", "%v", err)
			}
			root, from = abs, fmt.Sprintf("root in %s", f.path)
			break
		}
	}
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("no --root given and the current directory is unknown: %w", err)
		}
		return wd, nil
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("project root %s (from %s) does not exist", root, from)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("project root %s (from %s) is not a directory", root, from)
	}
	return root, nil
}
