package egress

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// varTmp is a directory for a test's fixture files, under /var/tmp (the
// sandbox hides the host's /tmp), removed at its end.
func varTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "shellgate-egress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeFiles writes files (path relative to dir → content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// installed answers the version commands of the tools named, and nothing
// else.
func installed(answers map[string]string) Run {
	return func(_ context.Context, name string, args ...string) (string, error) {
		if out, ok := answers[strings.Join(append([]string{name}, args...), " ")]; ok {
			return out, nil
		}
		return "", os.ErrNotExist
	}
}

func TestCargoSource(t *testing.T) {
	// The files are laid out under one directory: home/ (the user's home,
	// with ~/.cargo), work/ (a parent of the project), work/proj (the
	// project root), and cargohome/ for CARGO_HOME.
	for _, tc := range []struct {
		name  string
		files map[string]string
		env   []string
		hosts []string
		note  string // in the Note
	}{
		{"nothing configured", nil, nil, cargoDefault, ""},
		{"a sparse mirror in the project", map[string]string{
			"work/proj/.cargo/config.toml": `
[source.crates-io]
replace-with = "mirror"
[source.mirror]
registry = "sparse+https://crates.mirror.example/index/"
`}, nil, []string{"crates.mirror.example"}, "replaced by the sparse registry mirror: if its downloads (config.json's dl) are on another host"},
		{"a git mirror in ~/.cargo/config (the older name), through two replacements", map[string]string{
			"home/.cargo/config": `
[source.crates-io]
replace-with = "corp"
[source.corp]
replace-with = "corp-git"
[source.corp-git]
registry = "https://git.corp.example/crates.io-index"
`}, nil, []string{"git.corp.example"}, ""},
		{"vendored: nothing to fetch", map[string]string{
			"work/proj/.cargo/config.toml": `
[source.crates-io]
replace-with = "vendored-sources"
[source.vendored-sources]
directory = "vendor"
`}, nil, nil, "replaced by the local source vendored-sources"},
		{"the nearest file wins; a parent's registries are added", map[string]string{
			"work/proj/.cargo/config.toml": `
[source.crates-io]
replace-with = "near"
[source.near]
registry = "sparse+https://near.example/index/"
`,
			"work/.cargo/config.toml": `
[source.crates-io]
replace-with = "far"
[source.far]
registry = "sparse+https://far.example/index/"
[registries.internal]
index = "sparse+https://internal.example/api/v1/crates/"
`}, nil, []string{"near.example", "internal.example"}, "the sparse registry near"},
		{"CARGO_HOME and CARGO_REGISTRIES_*_INDEX", map[string]string{
			"cargohome/config.toml": `
[source.crates-io]
replace-with = "m"
[source.m]
registry = "sparse+https://home.mirror.example/"
`,
			"home/.cargo/config.toml": `
[source.crates-io]
replace-with = "ignored"
[source.ignored]
registry = "sparse+https://not.read.example/"
`}, []string{"CARGO_HOME=@/cargohome", "CARGO_REGISTRIES_MY_REG_INDEX=sparse+https://my-reg.example/index/"},
			[]string{"home.mirror.example", "my-reg.example"}, "the sparse registry m:"},
		{"a replacement nothing defines", map[string]string{
			"work/proj/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"nowhere\"\n",
		}, nil, nil, "replaced by nowhere, which no config file read defines"},
		{"a file that is not TOML", map[string]string{
			"work/proj/.cargo/config.toml": "[source.crates-io\n",
		}, nil, cargoDefault, "config.toml: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := varTmp(t)
			writeFiles(t, dir, tc.files)
			env := []string{}
			for _, kv := range tc.env {
				env = append(env, strings.ReplaceAll(kv, "@", dir))
			}
			m := Machine{Run: installed(map[string]string{"cargo --version": "cargo 1.91.0"}), Dir: filepath.Join(dir, "work/proj"), Home: filepath.Join(dir, "home"), Env: env}
			s := cargoSource(context.Background(), m)
			if s == nil {
				t.Fatal("no source")
			}
			if !slices.Equal(s.Hosts, tc.hosts) {
				t.Errorf("hosts %q, want %q", s.Hosts, tc.hosts)
			}
			if tc.note != "" && !strings.Contains(s.Note, tc.note) || tc.note == "" && s.Note != "" {
				t.Errorf("note %q, want %q", s.Note, tc.note)
			}
			if len(tc.files) > 0 && !strings.Contains(s.From+s.Note, dir) {
				t.Errorf("from %q: names no file read", s.From)
			}
		})
	}
	if s := cargoSource(context.Background(), Machine{Run: installed(nil)}); s != nil {
		t.Errorf("cargo not installed: %+v", s)
	}
}

func TestMavenSource(t *testing.T) {
	settings := func(body string) string {
		return `<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">` + body + `</settings>`
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		mvn   string // mvn --version's output
		env   []string
		hosts []string
	}{
		{"nothing configured", nil, "Apache Maven 3.9.9", nil, mavenCentral},
		{"Maven's own blocker of http:// repositories", map[string]string{
			"maven/conf/settings.xml": settings(`<mirrors><mirror><id>maven-default-http-blocker</id><mirrorOf>external:http:*</mirrorOf><url>http://0.0.0.0/</url><blocked>true</blocked></mirror></mirrors>`),
		}, "Maven home: @/maven", nil, mavenCentral},
		{"a mirror of everything in ~/.m2", map[string]string{
			"home/.m2/settings.xml": settings(`<mirrors><mirror><id>corp</id><mirrorOf>*</mirrorOf><url>https://nexus.corp.example/repository/maven-public/</url></mirror></mirrors>`),
		}, "Apache Maven 3.9.9", nil, []string{"nexus.corp.example"}},
		{"a mirror of everything but central", map[string]string{
			"home/.m2/settings.xml": settings(`<mirrors><mirror><mirrorOf>*,!central</mirrorOf><url>https://other.example/m2</url></mirror></mirrors>`),
		}, "Apache Maven 3.9.9", nil, append(slices.Clone(mavenCentral), "other.example")},
		{"the installation's settings, from mvn --version; a profile's repositories", map[string]string{
			"maven/conf/settings.xml": settings(`<mirrors><mirror><mirrorOf>central</mirrorOf><url>https://central.mirror.example/</url></mirror></mirrors>
<profiles><profile><id>p</id><repositories><repository><id>r</id><url>https://repo.example/releases</url></repository></repositories>
<pluginRepositories><pluginRepository><id>pr</id><url>https://plugins.example/</url></pluginRepository></pluginRepositories></profile></profiles>`),
		}, "Apache Maven 3.9.9\nMaven home: @/maven\nJava version: 21", nil, []string{"central.mirror.example", "repo.example", "plugins.example"}},
		{"MAVEN_HOME when mvn does not say, and the project's pom.xml", map[string]string{
			"mh/conf/settings.xml": settings(`<mirrors><mirror><mirrorOf>external:*</mirrorOf><url>http://mh.example:8081/</url></mirror></mirrors>`),
			"work/proj/pom.xml":    `<project><repositories><repository><url>https://pom-repo.example/maven2</url></repository></repositories></project>`,
		}, "Apache Maven 3.9.9", []string{"MAVEN_HOME=@/mh"}, []string{"mh.example", "pom-repo.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := varTmp(t)
			writeFiles(t, dir, tc.files)
			env := []string{}
			for _, kv := range tc.env {
				env = append(env, strings.ReplaceAll(kv, "@", dir))
			}
			m := Machine{Run: installed(map[string]string{"mvn --version": strings.ReplaceAll(tc.mvn, "@", dir)}),
				Dir: filepath.Join(dir, "work/proj"), Home: filepath.Join(dir, "home"), Env: env}
			s := mavenSource(context.Background(), m)
			if s == nil {
				t.Fatal("no source")
			}
			if !slices.Equal(s.Hosts, tc.hosts) {
				t.Errorf("hosts %q, want %q", s.Hosts, tc.hosts)
			}
			if s.Note != "" {
				t.Errorf("note %q", s.Note)
			}
		})
	}
}
