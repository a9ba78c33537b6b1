package sandbox

import (
	"maps"
	"os"
	"strings"
	"testing"
)

// fakeHost is a host described by a table: path → kind (a "→target" suffix
// makes a symlink), and the settings files' contents.
type fakeHost struct {
	entries map[string]string
	files   map[string]string
}

func (h fakeHost) Lstat(path string) (Kind, string) {
	e, ok := h.entries[path]
	if !ok {
		if _, ok := h.files[path]; ok {
			return File, ""
		}
		return Absent, ""
	}
	if t, ok := strings.CutPrefix(e, "→"); ok {
		return Symlink, t
	}
	return map[string]Kind{"dir": Dir, "file": File, "socket": Socket}[e], ""
}

func (h fakeHost) ReadFile(path string) ([]byte, bool) {
	s, ok := h.files[path]
	return []byte(s), ok
}

// A typical workstation: merged /usr, a home with toolchains, secrets, agents'
// state and a Docker socket, a project under it.
var workstation = fakeHost{
	entries: map[string]string{
		"/usr": "dir", "/etc": "dir", "/var": "dir", "/opt": "dir", "/sys": "dir", "/var/tmp": "dir",
		"/bin": "→usr/bin", "/lib": "→usr/lib", "/lib64": "→usr/lib64", "/sbin": "→usr/sbin",
		"/home": "dir", "/root": "dir", "/mnt": "dir", "/srv": "dir", "/boot": "dir", "/data": "dir",
		"/var/run":                            "→/run",
		"/etc/resolv.conf":                    "→../run/systemd/resolve/stub-resolv.conf",
		"/home/u":                             "dir",
		"/home/u/proj":                        "dir",
		"/home/u/.ssh":                        "dir",
		"/home/u/.aws":                        "dir",
		"/home/u/.claude":                     "dir",
		"/home/u/.codex":                      "dir",
		"/home/u/.config/gh":                  "dir",
		"/home/u/.local/state":                "dir",
		"/home/u/.bash_history":               "file",
		"/home/u/.pgpass":                     "file",
		"/home/u/.cargo/bin":                  "dir",
		"/home/u/.cargo/registry":             "dir",
		"/home/u/.rustup":                     "dir",
		"/home/u/.nvm":                        "dir",
		"/home/u/.npm":                        "dir",
		"/home/u/go/bin":                      "dir",
		"/home/u/go/pkg/mod":                  "dir",
		"/home/u/.cache/go-build":             "dir",
		"/home/u/.cache/huggingface":          "dir",
		"/home/u/.githooks":                   "dir",
		"/home/u/.docker/desktop":             "dir",
		"/var/lib/lxd":                        "dir",
		"/home/u/.docker/desktop/docker.sock": "socket",
		"/var/lib/lxd/unix.socket":            "socket",
		"/run/docker.sock":                    "socket",
		"/home/u/proj/dev.sock":               "socket",
		"/tmp/spill":                          "dir",
	},
	files: map[string]string{
		"/home/u/.gitconfig": "[user]\n\tname = U\n[credential]\n\thelper = store\n[core]\n\thooksPath = ~/.githooks\n" +
			"[url \"https://u:ghp_0123456789abcdefABCDEF@github.com/\"]\n\tinsteadOf = gh:\n[http]\n\textraHeader = Authorization: Bearer x\n",
		"/home/u/.npmrc": "registry=https://npm.example/\n//npm.example/:_authToken=npm_0123456789abcdefABCDEF\nfund=false\n",
	},
}

var workstationSpec = Spec{
	Writable:   []string{"/home/u/proj"},
	Caches:     []string{"/home/u/.npm", "/home/u/go/pkg/mod", "/home/u/.cache/go-build", "/home/u/.cache/pip"},
	CacheStore: "/home/u/.local/state/shellgate/caches",
	Home:       "/home/u",
	Hidden:     []string{"/home/u/.ssh"},
	Visible:    []string{"/tmp/spill"},
}

func planOf(t *testing.T, spec Spec, h fakeHost, sockets ...string) map[string]Step {
	t.Helper()
	steps := Plan(spec, Facts{Host: h, Sockets: sockets})
	byPath := map[string]Step{}
	for _, s := range steps {
		if prev, ok := byPath[s.Path]; ok && prev.Op != OpReadOnly && s.Op != OpReadOnly && s.Op != OpMask {
			t.Errorf("two steps at %s: %v and %v", s.Path, prev, s)
		}
		if s.Op != OpReadOnly {
			byPath[s.Path] = s
		}
	}
	return byPath
}

// The view shows the system read-only, nothing of the host's other top-level
// directories, and a home with the toolchains but no credential of any kind.
func TestPlanShowsWhatTheWorkNeeds(t *testing.T) {
	steps := planOf(t, workstationSpec, workstation)
	want := map[string]string{ // path → "op rw|ro"
		"/usr": "bind ro", "/etc": "bind ro", "/var": "bind ro", "/opt": "bind ro", "/sys": "bind ro",
		"/bin": "symlink", "/lib64": "symlink",
		"/run": "tmpfs ro", "/tmp": "tmpfs rw", "/var/tmp": "tmpfs rw", "/dev": "tmpfs rw", "/dev/shm": "tmpfs rw",
		"/dev/null": "bind rw", "/dev/pts": "devpts", "/dev/ptmx": "symlink", "/proc": "proc",
		"/home/u": "tmpfs rw", "/home/u/proj": "bind rw",
		"/home/u/.cargo/bin": "bind ro", "/home/u/.rustup": "bind ro", "/home/u/.nvm": "bind ro", "/home/u/go/bin": "bind ro",
		"/home/u/.npm": "overlay rw", "/home/u/go/pkg/mod": "overlay rw", "/home/u/.cache/go-build": "overlay rw",
		"/home/u/.cache/pip": "overlay rw", // absent on the host: the project's own copy
		"/home/u/.gitconfig": "file", "/home/u/.npmrc": "file", "/home/u/.githooks": "bind ro",
		"/tmp/spill": "bind ro",
	}
	for path, w := range want {
		s, ok := steps[path]
		if !ok {
			t.Errorf("%s: no step, want %s", path, w)
			continue
		}
		got := string(s.Op)
		if s.Op == OpBind || s.Op == OpTmpfs || s.Op == OpOverlay {
			got += map[bool]string{true: " rw", false: " ro"}[s.Write]
		}
		if got != w {
			t.Errorf("%s: %s, want %s (%v)", path, got, w, s)
		}
	}
	for _, absent := range []string{"/home", "/root", "/mnt", "/srv", "/boot", "/data", "/home/u/.ssh", "/home/u/.aws",
		"/home/u/.claude", "/home/u/.codex", "/home/u/.config/gh", "/home/u/.local/state", "/home/u/.bash_history",
		"/home/u/.pgpass", "/home/u/.cache/huggingface", "/home/u/.cargo/registry", "/home/u/.docker/desktop"} {
		if s, ok := steps[absent]; ok {
			t.Errorf("%s is in the view: %v", absent, s)
		}
	}
	if s := steps["/home/u/.npm"]; s.Src != "/home/u/.npm" || !strings.HasPrefix(s.Upper, workstationSpec.CacheStore+"/") {
		t.Errorf("npm's cache: %+v, want the host's under a layer in the store", s)
	}
	if s := steps["/home/u/.cache/pip"]; s.Src != "" {
		t.Errorf("a cache the host lacks: %+v, want the project's copy alone", s)
	}
}

// Settings files shared with credentials show the settings only.
func TestPlanScrubsSettings(t *testing.T) {
	steps := planOf(t, workstationSpec, workstation)
	git := string(steps["/home/u/.gitconfig"].Data)
	npm := string(steps["/home/u/.npmrc"].Data)
	for _, leak := range []string{"ghp_", "helper", "extraHeader", "Bearer", "u:"} {
		if strings.Contains(git, leak) {
			t.Errorf(".gitconfig keeps %q:\n%s", leak, git)
		}
	}
	for _, keep := range []string{"name = U", "hooksPath", "https://github.com/", "insteadOf = gh:"} {
		if !strings.Contains(git, keep) {
			t.Errorf(".gitconfig lost %q:\n%s", keep, git)
		}
	}
	if strings.Contains(npm, "_authToken") || strings.Contains(npm, "npm_0123") || !strings.Contains(npm, "registry=https://npm.example/") || !strings.Contains(npm, "fund=false") {
		t.Errorf(".npmrc scrubbed wrong:\n%s", npm)
	}
}

// Host daemons' sockets are masked wherever the view shows their directory,
// the project's too (a host process listening there, an overmind or a
// database, is the host's); those in hidden places need no mask.
func TestPlanMasksHostSockets(t *testing.T) {
	socks := []string{"/home/u/.docker/desktop/docker.sock", "/var/lib/lxd/unix.socket", "/run/docker.sock", "/home/u/proj/dev.sock", "/home/u/.rustup/x.sock"}
	steps := Plan(workstationSpec, Facts{Host: workstation, Sockets: socks})
	masked := map[string]bool{}
	for _, s := range steps {
		if s.Op == OpMask {
			masked[s.Path] = true
		}
	}
	for sock, want := range map[string]bool{
		"/var/lib/lxd/unix.socket": true, "/home/u/.rustup/x.sock": true,
		"/home/u/proj/dev.sock":               true,
		"/home/u/.docker/desktop/docker.sock": false, "/run/docker.sock": false,
	} {
		if masked[sock] != want {
			t.Errorf("%s masked %v, want %v", sock, masked[sock], want)
		}
	}
}

// A project root that is the home itself shows the home as it is, less the
// secrets Spec.Hidden names.
func TestPlanRootIsHome(t *testing.T) {
	spec := workstationSpec
	spec.Writable = []string{"/home/u"}
	steps := planOf(t, spec, workstation)
	if s := steps["/home/u"]; s.Op != OpBind || !s.Write {
		t.Errorf("the home: %v, want the project root, writable", s)
	}
	if s := steps["/home/u/.ssh"]; s.Op != OpMask {
		t.Errorf("~/.ssh: %v, want masked", s)
	}
}

// With the host's network, a resolver file in /run is shown; without, /run
// stays empty.
func TestPlanResolver(t *testing.T) {
	const stub = "/run/systemd/resolve/stub-resolv.conf"
	if _, ok := planOf(t, workstationSpec, workstation)[stub]; ok {
		t.Error("resolver file shown with the network off")
	}
	spec := workstationSpec
	spec.Network = true
	if s, ok := planOf(t, spec, workstation)[stub]; !ok || s.Op != OpBind || s.Write {
		t.Errorf("with the network: %v, want a read-only bind", s)
	}
	// Its mount point is made in /run before /run becomes read-only.
	bind, ro := -1, -1
	for i, s := range Plan(spec, Facts{Host: workstation}) {
		switch {
		case s.Path == stub:
			bind = i
		case s.Path == "/run" && s.Op == OpReadOnly:
			ro = i
		}
	}
	if bind < 0 || ro < bind {
		t.Errorf("the resolver bind at %d, /run made read-only at %d", bind, ro)
	}
}

// Paths are mounted outermost first: a writable path inside a visible one,
// and the home's contents after the home.
func TestPlanOrder(t *testing.T) {
	spec := workstationSpec
	spec.Visible = []string{"/srv", "/home/u/notes"}
	spec.Writable = []string{"/srv/proj"}
	h := fakeHost{entries: map[string]string{"/srv": "dir", "/srv/proj": "dir", "/home/u": "dir", "/home/u/notes": "dir", "/home/u/.rustup": "dir", "/tmp/spill": "dir"}}
	pos := map[string]int{}
	for i, s := range Plan(spec, Facts{Host: h}) {
		pos[s.Path] = i
	}
	for _, pair := range [][2]string{{"/srv", "/srv/proj"}, {"/home/u", "/home/u/.rustup"}, {"/home/u", "/home/u/notes"}} {
		a, okA := pos[pair[0]]
		b, okB := pos[pair[1]]
		if !okA || !okB || a > b {
			t.Errorf("%s (%d, %v) must come before %s (%d, %v)", pair[0], a, okA, pair[1], b, okB)
		}
	}
}

// What Landlock lets commands write: the view's writable mounts, no device
// directory or read-only path.
func TestWritableDirs(t *testing.T) {
	dirs := WritableDirs(Plan(workstationSpec, Facts{Host: workstation}))
	got := strings.Join(dirs, " ")
	for _, want := range []string{"/tmp", "/var/tmp", "/dev/shm", "/home/u", "/home/u/proj", "/home/u/.npm"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("writable %v lacks %s", dirs, want)
		}
	}
	for _, not := range []string{"/usr", "/dev", "/dev/null", "/run", "/tmp/spill"} {
		if strings.Contains(" "+got+" ", " "+not+" ") {
			t.Errorf("writable %v has %s", dirs, not)
		}
	}
}

// BenchmarkPlan is the plan's share of a session's start on this machine:
// the facts gathered (stats, the host's sockets, settings files read and
// scrubbed) and the steps made.
func BenchmarkPlan(b *testing.B) {
	spec := workstationSpec
	spec.Home, _ = os.UserHomeDir()
	spec.Writable = []string{b.TempDir()}
	for b.Loop() {
		Plan(spec, HostFacts())
	}
}

// Run as the host's root, the session sees the system as another user would:
// what only root may read in /etc and /var is masked, and nothing else.
func TestPlanMasksRootPrivate(t *testing.T) {
	f := Facts{Host: workstation, Private: []string{"/etc/shadow", "/etc/ssl/private", "/var/lib/secretd", "/srv/private", "/home/u", "/home/u/proj/.secret"}}
	steps := Plan(workstationSpec, f)
	masked := map[string]bool{}
	for _, s := range steps {
		if s.Op == OpMask {
			masked[s.Path] = true
		}
	}
	// The project and what holds it are never masked, private or not.
	for p, want := range map[string]bool{"/etc/shadow": true, "/etc/ssl/private": true, "/var/lib/secretd": true, "/srv/private": false, "/home/u": false, "/home/u/proj/.secret": false} {
		if masked[p] != want {
			t.Errorf("%s masked %v, want %v", p, masked[p], want)
		}
	}
}

// Where /etc and /var are shown as others see them, they are bound from the
// trees shellgate hands the session, with no masks; a directory others may
// not enter that holds the project is an empty tmpfs until the project is
// bound in it, then read-only.
func TestPlanAsOthers(t *testing.T) {
	spec := workstationSpec
	spec.Writable = []string{"/var/lib/private/proj"}
	host := fakeHost{entries: maps.Clone(workstation.entries), files: workstation.files}
	host.entries["/var/lib/private/proj"] = "dir"
	f := Facts{Host: host, AsOthers: []string{"/etc", "/var"}, Closed: []string{"/var/lib/private"}}
	steps := Plan(spec, f)
	at := map[string]int{}
	for i, s := range steps {
		switch {
		case s.Op == OpBind && (s.Path == "/etc" || s.Path == "/var"):
			if !s.AsOthers {
				t.Errorf("%s bound as the host shows it", s.Path)
			}
		case s.Op == OpMask && strings.HasPrefix(s.Path, "/etc/"):
			t.Errorf("a mask in /etc: %v", s)
		}
		at[string(s.Op)+" "+s.Path] = i
	}
	tmpfs, ok1 := at["tmpfs /var/lib/private"]
	root, ok2 := at["bind /var/lib/private/proj"]
	ro, ok3 := at["read-only /var/lib/private"]
	if !ok1 || !ok2 || !ok3 || !(at["bind /var"] < tmpfs && tmpfs < root && root < ro) {
		t.Errorf("want bind /var, tmpfs, the project, read-only in that order: %v", steps)
	}
}
