package egress

import (
	"context"
	"encoding/xml"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// The toolchains that have no command to say where they fetch from: the
// preset reads their configuration files itself.

// cargoDefault are crates.io's hosts: the sparse index, the downloads, and
// the API.
var cargoDefault = []string{"index.crates.io", "static.crates.io", "crates.io"}

// cargoConfig is what the preset reads of a .cargo/config.toml.
type cargoConfig struct {
	Source map[string]struct {
		ReplaceWith   string `toml:"replace-with"`
		Registry      string `toml:"registry"`
		Git           string `toml:"git"`
		LocalRegistry string `toml:"local-registry"`
		Directory     string `toml:"directory"`
	} `toml:"source"`
	Registries map[string]struct {
		Index string `toml:"index"`
	} `toml:"registries"`
}

// cargoConfigFiles are the config files cargo reads, nearest first: those
// of the project directory and every parent, then $CARGO_HOME's.
func cargoConfigFiles(m Machine) []string {
	var files []string
	for dir := m.Dir; dir != ""; {
		files = append(files, filepath.Join(dir, ".cargo", "config.toml"), filepath.Join(dir, ".cargo", "config"))
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	cargoHome := m.getenv("CARGO_HOME")
	if cargoHome == "" && m.home() != "" {
		cargoHome = filepath.Join(m.home(), ".cargo")
	}
	if cargoHome != "" {
		files = append(files, filepath.Join(cargoHome, "config.toml"), filepath.Join(cargoHome, "config"))
	}
	return files
}

// cargoSource reads cargo's configuration as cargo does
// (doc.rust-lang.org/cargo/reference/config.html): .cargo/config.toml (or
// the older .cargo/config) in the project root and every directory above,
// then $CARGO_HOME/config.toml; and CARGO_REGISTRIES_<NAME>_INDEX. crates.io
// replaced by a mirror (source replacement) is the mirror; replaced by a
// local registry or a vendored directory, nothing; alternative registries
// are added.
func cargoSource(ctx context.Context, m Machine) *Source {
	if _, err := m.Run(ctx, "cargo", "--version"); err != nil {
		return nil
	}
	s := &Source{Tool: "cargo"}
	files := cargoConfigFiles(m)
	// The nearest file wins a key; files further up fill in what it lacks.
	replace := map[string]string{} // source → the source replacing it
	at := map[string]string{}      // source → its host; "" for a local one
	sparse := map[string]bool{}
	var alt, read []string // alternative registries' hosts; what was read
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var c cargoConfig
		if err := toml.Unmarshal(b, &c); err != nil {
			s.Note = joinNote(s.Note, f+": "+err.Error())
			continue
		}
		read = append(read, f)
		for _, name := range slices.Sorted(maps.Keys(c.Source)) {
			src := c.Source[name]
			if _, ok := replace[name]; !ok && src.ReplaceWith != "" {
				replace[name] = src.ReplaceWith
			}
			if _, ok := at[name]; ok {
				continue
			}
			switch {
			case src.Registry != "":
				at[name], sparse[name] = hostOf(src.Registry), strings.HasPrefix(src.Registry, "sparse+")
			case src.Git != "":
				at[name] = hostOf(src.Git)
			case src.LocalRegistry != "" || src.Directory != "":
				at[name] = ""
			}
		}
		for _, name := range slices.Sorted(maps.Keys(c.Registries)) {
			alt = addHost(alt, hostOf(c.Registries[name].Index))
		}
	}
	env := m.environ()
	slices.Sort(env)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CARGO_REGISTRIES_") && strings.HasSuffix(k, "_INDEX") {
			alt = addHost(alt, hostOf(v))
			read = append(read, "$"+k)
		}
	}
	// The end of a source's replacement chain is where its crates come from.
	end := func(name string) string {
		for seen := map[string]bool{}; replace[name] != "" && !seen[name]; {
			seen[name] = true
			name = replace[name]
		}
		return name
	}
	switch to := end("crates-io"); {
	case to == "crates-io":
		s.Hosts = slices.Clone(cargoDefault)
	case at[to] != "":
		if sparse[to] {
			s.Note = "crates.io is replaced by the sparse registry " + to + ": if its downloads (config.json's dl) are on another host, allow that host by name"
		}
	default:
		if _, ok := at[to]; ok {
			s.Note = "crates.io is replaced by the local source " + to + ": nothing to fetch for it"
		} else {
			s.Note = "crates.io is replaced by " + to + ", which no config file read defines"
		}
	}
	for _, name := range slices.Sorted(maps.Keys(replace)) {
		s.Hosts = addHost(s.Hosts, at[end(name)])
	}
	for _, h := range alt {
		s.Hosts = addHost(s.Hosts, h)
	}
	s.From = "default"
	if len(read) > 0 {
		s.From = strings.Join(read, ", ")
	}
	return s
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// mavenCentral are Maven Central's hosts.
var mavenCentral = []string{"repo.maven.apache.org", "repo1.maven.org"}

// mavenRepos are the <repository> and <pluginRepository> URLs of a
// settings.xml profile or a pom.xml.
type mavenRepos struct {
	Repositories       []string `xml:"repositories>repository>url"`
	PluginRepositories []string `xml:"pluginRepositories>pluginRepository>url"`
}

// mavenSettings is what the preset reads of a settings.xml.
type mavenSettings struct {
	Mirrors []struct {
		MirrorOf string `xml:"mirrorOf"`
		URL      string `xml:"url"`
		Blocked  bool   `xml:"blocked"` // Maven's own http:// blocker, at 0.0.0.0
	} `xml:"mirrors>mirror"`
	Profiles []mavenRepos `xml:"profiles>profile"`
}

// mavenSource reads Maven's settings as Maven does
// (maven.apache.org/settings.html): the user's ~/.m2/settings.xml and the
// installation's conf/settings.xml (its home from mvn --version, else
// $MAVEN_HOME or $M2_HOME): the mirrors, and the repositories of the
// profiles; and the project's own pom.xml repositories. Central is left out
// when a mirror stands for it (mirrorOf *, central or external:*).
func mavenSource(ctx context.Context, m Machine) *Source {
	version, err := m.Run(ctx, "mvn", "--version")
	if err != nil {
		return nil
	}
	s := &Source{Tool: "maven"}
	home := ""
	for _, line := range strings.Split(version, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "Maven home:"); ok {
			home = strings.TrimSpace(h)
		}
	}
	for _, env := range []string{"MAVEN_HOME", "M2_HOME"} {
		if home == "" {
			home = m.getenv(env)
		}
	}
	var files []string
	if m.home() != "" {
		files = append(files, filepath.Join(m.home(), ".m2", "settings.xml"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, "conf", "settings.xml"))
	}
	central := true
	var hosts, read []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var st mavenSettings
		if err := xml.Unmarshal(b, &st); err != nil {
			s.Note = joinNote(s.Note, f+": "+err.Error())
			continue
		}
		read = append(read, f)
		for _, mr := range st.Mirrors {
			if mr.Blocked {
				continue
			}
			hosts = addHost(hosts, hostOf(mr.URL))
			if mirrorsCentral(mr.MirrorOf) {
				central = false
			}
		}
		for _, p := range st.Profiles {
			for _, u := range slices.Concat(p.Repositories, p.PluginRepositories) {
				hosts = addHost(hosts, hostOf(u))
			}
		}
	}
	if m.Dir != "" {
		pom := filepath.Join(m.Dir, "pom.xml")
		if b, err := os.ReadFile(pom); err == nil {
			var p mavenRepos
			if err := xml.Unmarshal(b, &p); err != nil {
				s.Note = joinNote(s.Note, pom+": "+err.Error())
			} else {
				read = append(read, pom)
				for _, u := range slices.Concat(p.Repositories, p.PluginRepositories) {
					hosts = addHost(hosts, hostOf(u))
				}
			}
		}
	}
	if central {
		s.Hosts = slices.Clone(mavenCentral)
	}
	for _, h := range hosts {
		s.Hosts = addHost(s.Hosts, h)
	}
	s.From = "default"
	if len(read) > 0 {
		s.From = strings.Join(read, ", ")
	}
	return s
}

// mirrorsCentral reports whether a mirrorOf list covers Maven Central.
func mirrorsCentral(of string) bool {
	covers := false
	for _, id := range strings.Split(of, ",") {
		switch strings.TrimSpace(id) {
		case "*", "central", "external:*":
			covers = true
		case "!central":
			return false
		}
	}
	return covers
}
