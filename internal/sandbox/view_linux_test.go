package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cachestore"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/protect"
	"golang.org/x/sys/unix"
)

// The view is built from what the work needs: each test tries the attacks of
// one class the review found around the old view (a host with holes plugged),
// several spellings each, and checks the host, not what the command says.

// Metadata of what the view shows read-only cannot change: Landlock does not
// govern chmod, chown, utime or xattrs, a read-only mount does.
func TestViewMetadataReadOnly(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	victim := filepath.Join(l.shared, "victim")
	must(t, os.WriteFile(victim, []byte("v\n"), 0o644))
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	must(t, os.Chtimes(victim, old, old))
	s := start(t, l.spec())
	for _, cmd := range []string{
		"chmod 4777 " + victim,
		"chmod -R 777 " + l.shared,
		"python3 -c 'import os; os.chmod(\"" + victim + "\", 0o6777)'",
		"touch -d 2001-01-01 " + victim,
		"python3 -c 'import os; os.utime(\"" + victim + "\", (0, 0))'",
		"python3 -c 'import os; os.setxattr(\"" + victim + "\", \"user.x\", b\"1\")'",
		"chown 65534 " + victim,
		"chmod 000 /usr/bin/env /etc/hostname",
		"chmod 777 .. ../..",
	} {
		run(t, s, l.root, cmd)
	}
	fi, err := os.Stat(victim)
	must(t, err)
	if fi.Mode() != 0o644 || !fi.ModTime().Equal(old) {
		t.Errorf("victim changed: %v %v", fi.Mode(), fi.ModTime())
	}
	if n, _ := unix.Getxattr(victim, "user.x", nil); n > 0 {
		t.Error("an xattr was set on the victim")
	}
	if fi, err := os.Stat("/usr/bin/env"); err != nil || fi.Mode().Perm() == 0 {
		t.Errorf("/usr/bin/env: %v %v", fi.Mode(), err)
	}
	if fi, _ := os.Stat(l.base); fi.Mode().Perm() == 0o777 {
		t.Error("the root's parent became world-writable")
	}
}

// /dev holds a few devices and a terminal instance of the session's own:
// no disk, no console, no terminal of the host's.
func TestViewMinimalDev(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	got, _ := run(t, s, l.root, "ls -A /dev; echo --; ls -A /dev/pts")
	devs, pts, _ := strings.Cut(got, "--\n")
	want := "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero"
	if strings.Join(strings.Fields(devs), " ") != want {
		t.Errorf("/dev: %q, want %q", devs, want)
	}
	if strings.TrimSpace(pts) != "ptmx" {
		t.Errorf("/dev/pts holds %q: terminals not the session's own", pts)
	}
	// The devices work, and a terminal opened in the session has a name there.
	if got, code := run(t, s, l.root, `head -c 4 /dev/zero | wc -c; echo x > /dev/null; python3 -c 'import os; m, s = os.openpty(); print(os.ttyname(s))'`); code != 0 || !strings.Contains(got, "4\n") || !strings.Contains(got, "/dev/pts/0") {
		t.Errorf("devices: %q (exit %d)", got, code)
	}
	for _, dev := range []string{"/dev/vda", "/dev/sda", "/dev/console", "/dev/tty1", "/dev/ttyS0", "/dev/kmsg", "/dev/mem"} {
		if got, code := run(t, s, l.root, "head -c 1 "+dev+" || mknod /dev/x c 1 1"); code == 0 {
			t.Errorf("%s read: %q", dev, got)
		}
	}
}

// A host daemon's socket is out of reach wherever it lives: in the home
// (not in the view), in /run (empty), or in a directory the view shows.
func TestViewHostSockets(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	got := make(chan string, 8)
	listen := func(path string) {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		ln, err := net.Listen("unix", path)
		must(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				b := make([]byte, 64)
				n, _ := c.Read(b)
				got <- path + ": " + string(b[:n])
				c.Close()
			}
		}()
	}
	socks := []string{filepath.Join(l.home, ".docker/desktop/docker.sock"), filepath.Join(l.home, ".1password/agent.sock"), filepath.Join(l.shared, "lxd/unix.socket")}
	for _, p := range socks {
		listen(p)
	}
	s := start(t, l.spec())
	for _, p := range socks {
		for _, cmd := range []string{
			`python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"LEAK")' ` + p,
			`printf LEAK | nc -U -q0 ` + p,
			`python3 -c 'import socket,sys,os; s=socket.socket(socket.AF_UNIX); s.connect("/proc/self/root"+sys.argv[1]); s.sendall(b"LEAK")' ` + p,
		} {
			run(t, s, l.root, cmd)
		}
	}
	select {
	case m := <-got:
		t.Errorf("a host socket was reached: %s", m)
	case <-time.After(200 * time.Millisecond):
	}
	if out, code := run(t, s, l.root, "ls -A /run; touch /run/daemon.sock"); code == 0 || strings.TrimSpace(strings.Split(out, "\n")[0]) != "" && !strings.Contains(out, "Read-only") {
		t.Errorf("/run: %q (exit %d), want empty and read-only", out, code)
	}
}

// Credentials read as absent without being named anywhere, and the
// settings files that hold some show their settings alone.
func TestViewHomeShowsNoCredentials(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	files := map[string]string{
		".claude/.credentials.json":                        `{"token":"` + fakeKey + `"}`,
		".codex/auth.json":                                 fakeKey,
		".config/gemini/oauth_creds.json":                  fakeKey,
		".config/github-copilot/apps.json":                 fakeKey,
		".pgpass":                                          "db:5432:*:u:" + fakeKey,
		".config/rclone/rclone.conf":                       "pass = " + fakeKey,
		".m2/settings.xml":                                 "<password>" + fakeKey + "</password>",
		".gradle/gradle.properties":                        "token=" + fakeKey,
		".terraformrc":                                     fakeKey,
		".cache/huggingface/token":                         fakeKey,
		".bash_history":                                    "export TOKEN=" + fakeKey,
		".local/state/shellgate/audit.jsonl":               fakeKey,
		".config/shellgate/config.toml":                    "# " + fakeKey,
		".npmrc":                                           "registry=https://r.example/\n//r.example/:_authToken=" + fakeKey + "\n",
		".gitconfig":                                       "[user]\n\tname = U\n[credential]\n\thelper = !echo password=" + fakeKey + "\n",
		".config/pip/pip.conf":                             "[global]\nindex-url = https://u:" + fakeKey + "@pypi.example/simple\n",
		".yarnrc.yml":                                      "npmAuthToken: " + fakeKey + "\n",
		".cargo/config.toml":                               "[registry]\ntoken = \"" + fakeKey + "\"\n",
		".cargo/bin/cargo-fake":                            "#!/bin/sh\necho toolchain-here\n",
		".docker/config.json":                              fakeKey,
		".kube/config":                                     fakeKey,
		".config/gh/hosts.yml":                             fakeKey,
		".password-store/x.gpg":                            fakeKey,
		".local/share/keyrings/login.keyring":              fakeKey,
		".mozilla/firefox/p/logins.json":                   fakeKey,
		".vault-token":                                     fakeKey,
		".local/share/uv/credentials/credentials.toml":     "[[credential]]\nservice = \"https://p.example/\"\npassword = \"" + fakeKey + "\"\n",
		".local/share/uv/python/.lock":                     "",
		".npm-global/etc/npmrc":                            "//r.example/:_authToken=" + fakeKey + "\n",
		".dotnet/corefx/cryptography/x509stores/my/ab.pfx": fakeKey,
		".config/mise/config.toml":                         "[tools]\nnode = \"22\"\n[env]\nGITHUB_TOKEN = \"" + fakeKey + "\"\n",
		".bunfig.toml":                                     "[install]\nregistry = { url = \"https://r.example/\", token = \"" + fakeKey + "\" }\n",
		"some-new-tool/credentials":                        fakeKey,
		".config/some-new-tool/secrets.json":               fakeKey,
		".local/share/some-new-tool/session.cookie":        fakeKey,
	}
	for rel, content := range files {
		p := filepath.Join(l.home, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o755))
	}
	spec := l.spec()
	spec.Hidden = protect.SecretPaths(l.home, nil) // what a Gate hides
	s := start(t, spec)
	got, _ := run(t, s, l.root, "grep -r "+fakeKey+" ~ 2>&1; cat ~/.npmrc ~/.gitconfig ~/.config/pip/pip.conf ~/.config/mise/config.toml; ~/.cargo/bin/cargo-fake; git config --global user.name")
	if strings.Contains(got, fakeKey) {
		t.Errorf("a credential is in the view:\n%s", got)
	}
	for _, want := range []string{"registry=https://r.example/", "name = U", "index-url = https://pypi.example/simple", "toolchain-here", "\nU\n", `node = "22"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the view lacks %q:\n%s", want, got)
		}
	}
}

// Commands get a session keyring of their own: a key the user's other
// programs keep is not theirs to read.
func TestViewOwnKeyring(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	payload := []byte("KEYRING-" + fakeKey)
	id, err := unix.AddKey("user", "shellgate-test-"+strconv.Itoa(os.Getpid()), payload, unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Skipf("no keyring here: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
	if buf := make([]byte, 128); func() bool {
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		return err != nil || !bytes.Contains(buf[:n], payload)
	}() {
		t.Skip("the test's own key cannot be read back here")
	}
	s := start(t, l.spec())
	cmd := `python3 -c 'import ctypes,sys; b=ctypes.create_string_buffer(256); n=ctypes.CDLL(None,use_errno=True).syscall(250, 11, int(sys.argv[1]), b, 256); print(b.raw[:max(n,0)])' ` + strconv.Itoa(id)
	if got, _ := run(t, s, l.root, cmd); strings.Contains(got, "KEYRING-") {
		t.Errorf("a command read the user's key: %s", got)
	}
	// Nor its name: /proc/keys lists every key the user may view.
	if got, _ := run(t, s, l.root, "cat /proc/keys"); strings.Contains(got, "shellgate-test-") {
		t.Errorf("a command listed the user's keys: %s", got)
	}
}

// A descriptor the process that started the session left open across exec
// (an agent's log file, outside the root) never reaches a command: written
// through, it would change a host file that no path rule sees.
func TestViewNoInheritedDescriptors(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	victim := filepath.Join(l.outside, "agent.log")
	// No O_CLOEXEC, as a careless parent leaves it.
	fd, err := unix.Open(victim, unix.O_CREAT|unix.O_WRONLY|unix.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	s := start(t, l.spec())
	n := strconv.Itoa(fd)
	for _, cmd := range []string{
		"echo pwned >&" + n,
		"echo pwned > /proc/self/fd/" + n,
		"echo pwned >> /dev/fd/" + n,
		`python3 -c 'import os,sys; os.write(int(sys.argv[1]), b"pwned")' ` + n,
	} {
		run(t, s, l.root, cmd)
	}
	if got, _ := run(t, s, l.root, "ls /proc/self/fd"); slices.Contains(strings.Fields(got), n) {
		t.Errorf("a command holds descriptor %s: %s", n, got)
	}
	if b, err := os.ReadFile(victim); err != nil || len(b) != 0 {
		t.Errorf("the host file behind an inherited descriptor: %q, %v", b, err)
	}
}

// A tool cache is warm in the session, and what a command writes there lands
// in the project's own copy: the host's cache, which host programs read and
// run later, is never written, and the next session of the project sees the
// copy.
func TestViewCachesCopyOnWrite(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cache := filepath.Join(l.home, ".npm")
	must(t, os.MkdirAll(filepath.Join(cache, "_cacache"), 0o755))
	must(t, os.WriteFile(filepath.Join(cache, "_cacache", "warm"), []byte("warm\n"), 0o644))
	spec := l.spec()
	spec.Caches = []string{cache, filepath.Join(l.home, ".cache", "pip")}
	spec.CacheStore = filepath.Join(l.base, "store")
	s := start(t, spec)
	cmd := "cat ~/.npm/_cacache/warm && echo planted > ~/.npm/_update-notifier-last-checked && rm ~/.npm/_cacache/warm && " +
		"ln -sf " + l.outside + "/victim ~/.npm/trap && mkdir -p ~/.cache/pip/wheels && echo built > ~/.cache/pip/wheels/w"
	if got, code := run(t, s, l.root, cmd); code != 0 || !strings.HasPrefix(got, "warm\n") {
		t.Fatalf("the cache in the session: %q (exit %d)", got, code)
	}
	s.Close()
	entries, _ := os.ReadDir(cache)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "_cacache" || !exists(filepath.Join(cache, "_cacache", "warm")) {
		t.Errorf("the host's cache changed: %v", names)
	}
	if exists(filepath.Join(l.home, ".cache", "pip")) {
		t.Error("a cache the host lacked was made on the host")
	}
	s = start(t, spec)
	if got, _ := run(t, s, l.root, "cat ~/.npm/_update-notifier-last-checked ~/.cache/pip/wheels/w; ls ~/.npm/_cacache"); got != "planted\nbuilt\n" {
		t.Errorf("the next session of the project sees %q, want its own copy", got)
	}
}

// The marker a cache's volatile overlay leaves in its layer (a directory of
// mode 0 its owner cannot remove) is not removed in the session's set-up,
// where each rmdir waited for the disk on a filesystem that discards what it
// frees at once (the helper's set-up, which a one-shot run waits for), but
// beside the session's commands, and the session's end waits for it.
func TestViewCacheMarkerRemovedBesideTheSession(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cache := filepath.Join(l.home, ".npm")
	must(t, os.MkdirAll(cache, 0o755))
	spec := l.spec()
	spec.Caches = []string{cache}
	spec.CacheStore = filepath.Join(l.base, "store")
	held := make(chan struct{})
	remove := removeMarkers
	removeMarkers = func(steps []Step) {
		<-held
		remove(steps)
	}
	t.Cleanup(func() { removeMarkers = remove })
	s := start(t, spec)
	got, code := run(t, s, l.root, `awk '$5 == "`+cache+`" {print $9, $NF}' /proc/self/mountinfo`)
	if code != 0 || !strings.Contains(got, "volatile") {
		close(held)
		t.Skipf("no volatile overlay here: %q", got)
	}
	layers, _ := filepath.Glob(filepath.Join(spec.CacheStore, "*npm"))
	if len(layers) != 1 {
		close(held)
		t.Fatalf("the layer: %v", layers)
	}
	marker := filepath.Join(layers[0], cachestore.VolatileMarker)
	if _, err := os.Lstat(marker); err != nil {
		t.Errorf("the set-up removed the overlay's marker itself: %v", err)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close()
	}()
	select {
	case <-closed:
		t.Error("the session ended before its markers were removed")
	case <-time.After(200 * time.Millisecond):
	}
	close(held)
	<-closed
	if _, err := os.Lstat(marker); !os.IsNotExist(err) {
		t.Errorf("the overlay's marker is left in the layer: %v", err)
	}
}

// A cache layer's next mount is given an empty work dir, its last one set
// aside and removed beside the session: the kernel's mount removed it in
// the helper's set-up, where freeing its block waited for the disk on a
// filesystem that discards what it frees at once. The cache keeps what the
// last session wrote.
func TestViewCacheStaleWorkRemovedBesideTheSession(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cache := filepath.Join(l.home, ".npm")
	must(t, os.MkdirAll(cache, 0o755))
	spec := l.spec()
	spec.Caches = []string{cache}
	spec.CacheStore = filepath.Join(l.base, "store")
	mounted := `awk '$5 == "` + cache + `" {print $9}' /proc/self/mountinfo`
	s := start(t, spec)
	got, code := run(t, s, l.root, mounted+"; echo mine > ~/.npm/mine")
	s.Close()
	if code != 0 || !strings.HasPrefix(got, "overlay") {
		t.Skipf("no overlay here: %q (exit %d)", got, code)
	}
	layers, _ := filepath.Glob(filepath.Join(spec.CacheStore, "*npm"))
	if len(layers) != 1 {
		t.Fatalf("the layer: %v", layers)
	}
	work, stale := filepath.Join(layers[0], "work"), filepath.Join(layers[0], cachestore.StaleWork)
	var last unix.Stat_t
	must(t, unix.Lstat(work, &last))
	held := make(chan struct{})
	remove := removeMarkers
	removeMarkers = func(steps []Step) {
		<-held
		remove(steps)
	}
	t.Cleanup(func() { removeMarkers = remove })
	s = start(t, spec)
	var now, aside unix.Stat_t
	must(t, unix.Lstat(work, &now))
	if err := unix.Lstat(stale, &aside); err != nil || aside.Ino != last.Ino || now.Ino == last.Ino {
		t.Errorf("the last work dir (inode %d) was not set aside for the next mount: work is inode %d, aside %d (%v)", last.Ino, now.Ino, aside.Ino, err)
	}
	close(held)
	if got, code := run(t, s, l.root, "cat ~/.npm/mine"); code != 0 || got != "mine\n" {
		t.Errorf("the next session's cache: %q (exit %d), want the copy", got, code)
	}
	s.Close()
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the set-aside work dir is left in the layer: %v", err)
	}
}

// A cache's overlay is volatile (its unmount syncs nothing, so the helper
// exits at once), and the layer mounts again in the next session of the same
// boot; a layer last mounted in another boot, which a crash may have torn, is
// emptied first.
func TestViewCacheOverlayVolatile(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cache := filepath.Join(l.home, ".npm")
	must(t, os.MkdirAll(cache, 0o755))
	must(t, os.WriteFile(filepath.Join(cache, "host"), []byte("host\n"), 0o644))
	spec := l.spec()
	spec.Caches = []string{cache}
	spec.CacheStore = filepath.Join(l.base, "store")
	mounted := `awk '$5 == "` + cache + `" {print $9, $NF}' /proc/self/mountinfo`
	session := func(cmd string) string {
		s := start(t, spec)
		defer s.Close()
		got, code := run(t, s, l.root, mounted+"; "+cmd)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", cmd, code, got)
		}
		return got
	}
	got := session("echo mine > ~/.npm/mine")
	if !strings.HasPrefix(got, "overlay ") {
		t.Skipf("no overlay here: %q", got)
	}
	var uts unix.Utsname
	must(t, unix.Uname(&uts))
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(uts.Release[:]), "%d.%d", &major, &minor)
	if !strings.Contains(got, "volatile") && major*100+minor >= 510 {
		t.Errorf("the cache's overlay is not volatile on Linux %d.%d: %q", major, minor, got)
	}
	// Nothing is left in the layer that its owner could not remove without
	// privileges: the mount's marker sits in a directory of mode 0.
	layers, _ := filepath.Glob(filepath.Join(spec.CacheStore, "*npm"))
	if len(layers) != 1 {
		t.Fatalf("the layer: %v", layers)
	}
	if _, err := os.Lstat(filepath.Join(layers[0], cachestore.VolatileMarker)); !os.IsNotExist(err) {
		t.Errorf("the overlay's marker is left in the layer: %v", err)
	}
	if got := session("cat ~/.npm/host ~/.npm/mine"); !strings.HasPrefix(got, "overlay ") || !strings.HasSuffix(got, "host\nmine\n") {
		t.Errorf("the next session of the same boot: %q, want the overlay with the copy", got)
	}
	// Two sessions of the project at once: the second's start leaves the
	// first's overlay working, a copy-up of the host's too (through its
	// work dir, which a second mount of the same layer set aside).
	must(t, os.MkdirAll(filepath.Join(cache, "dir"), 0o755))
	must(t, os.WriteFile(filepath.Join(cache, "dir", "host"), []byte("host\n"), 0o644))
	first := start(t, spec)
	session("echo second >> ~/.npm/dir/host")
	if got, code := run(t, first, l.root, "echo again >> ~/.npm/dir/host && cat ~/.npm/dir/host"); code != 0 || got != "host\nagain\n" {
		t.Errorf("the first session's cache after a second session started: %q (exit %d)", got, code)
	}
	first.Close()
	if got := session("cat ~/.npm/dir/host"); !strings.HasSuffix(got, "host\nagain\n") {
		t.Errorf("the session after both: %q, want the first's copy", got)
	}
	boot := filepath.Join(layers[0], cachestore.BootFile)
	must(t, os.WriteFile(boot, []byte("another boot\n"), 0o600))
	if got := session("cat ~/.npm/host; ls ~/.npm"); !strings.HasPrefix(got, "overlay ") || !strings.HasSuffix(got, "host\ndir\nhost\n") {
		t.Errorf("after another boot: %q, want the overlay with the copy emptied", got)
	}
	now, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if last, _ := os.ReadFile(boot); string(last) != string(now) {
		t.Error("the layer does not record this boot")
	}
}

// Nothing a command leaves in .git makes the user's own git write outside the
// root: symlinks there, made by any tool, are gone when the command ends, and
// the command is told; also after commands that left .git as it was, whose
// sweeps the helper's watch of .git skips (beneath.GitSweeper).
func TestViewGitSymlinksRemoved(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.MkdirAll(filepath.Join(l.root, ".git", "logs", "refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(l.root, ".git", "description"), []byte("mine\n"), 0o644))
	victim := filepath.Join(l.outside, "victim")
	s := start(t, l.spec())
	run(t, s, l.root, "true")
	run(t, s, l.root, "true")
	l2, out := launch(t, s, l.root, "ln .git/description .git/logs/desc")
	if code, _ := l2.Wait(); code == nil || *code != 0 {
		t.Errorf("ln: %s", out())
	}
	if notes := strings.Join(l2.(interface{ Notes() []string }).Notes(), "\n"); !strings.Contains(notes, "copied .git/") {
		t.Errorf("a hard link in .git: not told: %q", notes)
	}
	for _, c := range []struct{ name, cmd string }{
		{"ln", "ln -sf " + victim + " .git/COMMIT_EDITMSG"},
		{"python", `python3 -c 'import os; os.symlink("` + victim + `", ".git/logs/HEAD")'`},
		{"deep", "mkdir -p .git/logs/refs/heads/a/b && ln -s ~/.bashrc .git/logs/refs/heads/a/b/main"},
		{"moved in", "ln -s " + victim + " /tmp/l && mv /tmp/l .git/ORIG_HEAD"},
		{"cp -s", "cp -s $PWD/README.md .git/FETCH_HEAD"},
		{"deep again", "mkdir -p .git/logs/refs/heads/a/b/c && ln -s ~/.bashrc .git/logs/refs/heads/a/b/c/main"},
	} {
		run(t, s, l.root, "true") // .git as it was: a sweep skipped
		l2, out := launch(t, s, l.root, c.cmd)
		if code, _ := l2.Wait(); code == nil || *code != 0 {
			t.Errorf("%s: %s", c.name, out())
		}
		notes := strings.Join(l2.(interface{ Notes() []string }).Notes(), "\n")
		if !strings.Contains(notes, "removed the symlink .git/") {
			t.Errorf("%s: not told: %q", c.name, notes)
		}
	}
	// A background job's, found at the next command's start or the close.
	run(t, s, l.root, "(sleep 0.3; ln -s "+victim+" .git/MERGE_MSG) &")
	time.Sleep(600 * time.Millisecond)
	run(t, s, l.root, "true")
	s.Close()
	err := filepath.WalkDir(filepath.Join(l.root, ".git"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeSymlink != 0 {
			t.Errorf("a symlink is left in .git: %s", p)
		}
		return nil
	})
	must(t, err)
}

// A one-shot session's helper opens no inotify instance for its first
// three sweeps of .git, those of a short command (its set-up's, the
// command's start's and its end's: beneath.NewGitSweeperWatchingAfter),
// because the close of an instance that watched anything, at a whole sweep
// or at the helper's exit, which `shellgate run` waits for, waits for the
// kernel to free its marks after an SRCU grace period. Its sweeps still
// undo what a command leaves in .git. A session for more commands watches
// from its set-up on, as before.
func TestOneShotHelperWatchesNothing(t *testing.T) {
	lane.Live(t)
	inotifyFDs := func(s *Session) int {
		dir := fmt.Sprintf("/proc/%d/fd", s.helper.Process.Pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join(dir, fd.Name())); l == "anon_inode:inotify" {
				n++
			}
		}
		return n
	}
	for _, oneShot := range []bool{true, false} {
		l := newLab(t)
		must(t, os.MkdirAll(filepath.Join(l.root, ".git", "logs"), 0o755))
		spec := l.spec()
		spec.OneShot = oneShot
		s := start(t, spec)
		// Set up, its first sweep made; no command yet, so no guard.
		switch n := inotifyFDs(s); {
		case oneShot && n != 0:
			t.Errorf("a one-shot session's helper holds %d inotify instances after its set-up", n)
		case !oneShot && n == 0:
			t.Error("a session's helper watches .git with no inotify instance: the test sees nothing")
		}
		l2, out := launch(t, s, l.root, "ln -s "+filepath.Join(l.outside, "victim")+" .git/COMMIT_EDITMSG")
		l2.Wait()
		if notes := strings.Join(l2.(interface{ Notes() []string }).Notes(), "\n"); !strings.Contains(notes, "removed the symlink .git/COMMIT_EDITMSG") {
			t.Errorf("one-shot %v: the symlink's removal not told: %q (%s)", oneShot, notes, out())
		}
		if _, err := os.Lstat(filepath.Join(l.root, ".git", "COMMIT_EDITMSG")); err == nil {
			t.Errorf("one-shot %v: the symlink is left in .git", oneShot)
		}
		s.Close()
	}
}

// A session's memory is limited (by default to half the machine's): a command
// that takes more is killed, and the session goes on.
func TestViewMemoryLimit(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	spec := l.spec()
	spec.Limits.Memory = 64 << 20
	s := start(t, spec)
	if s.Report().Layers[LayerMemory] != "64MiB" {
		t.Skipf("no memory limit here: %s", s.Report())
	}
	lx, out := launch(t, s, l.root, `python3 -c "x = b'x' * (300 << 20); print('allocated')"`)
	if code, _ := lx.Wait(); code != nil && *code == 0 || strings.Contains(out(), "allocated") {
		t.Errorf("300 MiB in a 64 MiB session: %q", out())
	}
	if got, code := run(t, s, l.root, "echo alive"); code != 0 || got != "alive\n" {
		t.Errorf("after the kill: %q %d", got, code)
	}
	if DefaultMemory() <= 0 {
		t.Error("no default memory limit on Linux")
	}
}

// Where the project's store can hold no set of cache layers (it cannot be
// made), the session starts with the host's caches read-only, as the Gate
// has them where it cannot open the store: a build reads them, and writes
// nothing there.
func TestViewCacheStoreUnusableReadOnly(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cache := filepath.Join(l.home, ".npm")
	must(t, os.MkdirAll(cache, 0o755))
	must(t, os.WriteFile(filepath.Join(cache, "host"), []byte("host\n"), 0o644))
	spec := l.spec()
	spec.Caches = []string{cache}
	spec.CacheStore = "/proc/no-such-store" // cannot be made
	s := start(t, spec)
	if got, code := run(t, s, l.root, "cat ~/.npm/host && echo x > ~/.npm/host"); code == 0 || !strings.HasPrefix(got, "host\n") || !strings.Contains(got, "Read-only") {
		t.Errorf("the host's cache without a store: %q (exit %d), want it read-only", got, code)
	}
	if b, _ := os.ReadFile(filepath.Join(cache, "host")); string(b) != "host\n" {
		t.Errorf("the host's cache was written: %q", b)
	}
}

// A step that cannot be applied is reported missing, with the step and why,
// and the rest of the view stands (the Gate in mode on then refuses).
func TestViewStepFailureReported(t *testing.T) {
	l := newLab(t)
	spec := l.spec()
	cache := filepath.Join(l.home, ".npm")
	spec.Caches = []string{cache}
	spec.CacheStore = filepath.Join(l.base, "store")
	// The cache's layer cannot be made: a file has its name.
	must(t, os.MkdirAll(spec.CacheStore, 0o700))
	must(t, os.WriteFile(filepath.Join(spec.CacheStore, strings.ReplaceAll(strings.TrimPrefix(cache, "/"), "/", "%")), nil, 0o600))
	s := start(t, spec)
	missing := strings.Join(s.Report().Missing, "\n")
	if !strings.Contains(missing, "view: overlay "+filepath.Join(l.home, ".npm")) {
		t.Errorf("missing: %q", missing)
	}
	if got, code := run(t, s, l.root, "cat README.md; ls ~/.ssh 2>&1"); code == 0 || !strings.Contains(got, "readme") {
		t.Errorf("the rest of the view: %q (exit %d)", got, code)
	}
}

// What no mount or network namespace separates is refused: a vsock socket (a
// virtual machine's channel to its host) and io_uring (whose operations open
// sockets past the filter). Other sockets work.
func TestViewNoVsockNoIOUring(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	got, _ := run(t, s, l.root, `python3 -c '
import socket, ctypes, errno
for fam, name in ((socket.AF_VSOCK, "vsock"), (socket.AF_UNIX, "unix"), (socket.AF_INET, "inet")):
    try:
        socket.socket(fam, socket.SOCK_STREAM).close(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
r = libc.syscall(425, 8, params)
print("io_uring", "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
'`)
	for _, want := range []string{"vsock EAFNOSUPPORT", "unix ok", "inet ok", "io_uring EPERM"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q:\n%s", want, got)
		}
	}
}

// No file in the root leaves the session set-user-ID or set-group-ID, by any
// of the calls that set a mode: on the host it would lend the user's identity
// to whoever runs it. Plain modes still change.
func TestViewNoSetIDModes(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	got, _ := run(t, s, l.root, `cp /usr/bin/id tool; mkdir shared
for spell in "chmod u+s tool" "chmod 4755 tool" "chmod g+s shared" "install -m 6755 /usr/bin/id tool2" \
	"python3 -c 'import os; os.chmod(\"tool\", 0o4755)'" \
	"python3 -c 'import os; fd = os.open(\"tool\", os.O_RDONLY); os.fchmod(fd, 0o2755)'" \
	"python3 -c 'import os, stat; os.mknod(\"node\", stat.S_IFREG | 0o4755)'" \
	"chmod 700 tool"; do
	if sh -c "$spell" 2>/dev/null; then echo "ok: $spell"; else echo "refused: $spell"; fi
done
find . -perm /6000 -printf "set-id: %p\n"`)
	for _, want := range []string{"refused: chmod u+s tool", "refused: chmod 4755 tool", "refused: chmod g+s shared", "refused: install -m 6755",
		"refused: python3 -c 'import os; os.chmod", "refused: python3 -c 'import os; fd", "refused: python3 -c 'import os, stat", "ok: chmod 700 tool"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "set-id:") {
		t.Errorf("a set-id file was made:\n%s", got)
	}
}

// varLab makes a directory under /var/lib (the host's /var, not the view's
// own /var/tmp) that others may enter, removed at the end.
func varLab(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the host's root sees /etc and /var as others do: only root runs this")
	}
	dir, err := os.MkdirTemp("/var/lib", "shellgate-sandbox-test-")
	if err != nil {
		t.Skipf("no lab in /var/lib: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	return dir
}

// Run as the host's root, a command reads in /etc and /var only what others
// may read, however deep it lies: files show as nobody's, so a file only
// its owner may read is nobody's to read, not root's.
func TestViewRootSeesWhatOthersSee(t *testing.T) {
	lane.Live(t)
	dir := varLab(t)
	deep := filepath.Join(dir, "a/b/c/d/e")
	must(t, os.MkdirAll(deep, 0o755))
	must(t, os.WriteFile(filepath.Join(deep, "secret.key"), []byte("SECRET-"+fakeKey), 0o600))
	must(t, os.WriteFile(filepath.Join(deep, "public.txt"), []byte("public\n"), 0o644))
	l := newLab(t)
	s := start(t, l.spec())
	for _, cmd := range []string{
		"cat " + deep + "/secret.key",
		"cd " + dir + "/a/b && cat c/d/e/secret.key",
		"python3 -c 'print(open(\"" + deep + "/secret.key\").read())'",
		"cat /etc/shadow",
	} {
		if got, _ := run(t, s, l.root, cmd+" 2>&1"); strings.Contains(got, "SECRET-") || strings.Contains(got, "root:") {
			t.Errorf("%s: read what only root may: %s", cmd, got)
		}
	}
	if got, code := run(t, s, l.root, "cat "+deep+"/public.txt && head -c 5 /etc/passwd"); code != 0 || got != "public\nroot:" {
		t.Errorf("what others may read: exit %d, %q", code, got)
	}
}

// A project beneath a directory of /var that others may not enter still
// works: the view shows that directory empty but for the way to the
// project, so nothing else in it is there to read.
func TestViewRootProjectInPrivateVar(t *testing.T) {
	lane.Live(t)
	dir := varLab(t)
	private := filepath.Join(dir, "private")
	root := filepath.Join(private, "proj")
	must(t, os.MkdirAll(root, 0o755))
	must(t, os.Chmod(private, 0o700))
	must(t, os.WriteFile(filepath.Join(private, "other.key"), []byte("SECRET-"+fakeKey), 0o600))
	l := newLab(t)
	spec := l.spec()
	spec.Writable = []string{root}
	s := start(t, spec)
	if got, code := run(t, s, root, "echo made > f && cat "+root+"/f"); code != 0 || got != "made\n" {
		t.Errorf("in the project: exit %d, %q", code, got)
	}
	// What else the view puts there counts too, read from the plan: a
	// home in it (the project elsewhere), its tmpfs mounted at the home.
	homeDir := filepath.Join(private, "home")
	must(t, os.MkdirAll(homeDir, 0o700))
	spec = l.spec()
	spec.Home, spec.Hidden = homeDir, nil
	if got, code := run(t, start(t, spec), l.root, "echo x > "+homeDir+"/.history && cat "+homeDir+"/.history"); code != 0 || got != "x\n" {
		t.Errorf("the home: exit %d, %q", code, got)
	}
	if got, _ := run(t, s, root, "cat "+private+"/other.key 2>&1; ls -A "+private); strings.Contains(got, "SECRET-") || !strings.Contains(got, "No such file") || strings.Contains(got, "other.key\n") {
		t.Errorf("beside the project: %s", got)
	}
}

// A session's set of cache layers stays held while its helper, which mounts
// them, lives: a shellgate that dies first (its descriptor of the hold
// closed) leaves a helper that ends the session, its overlays still
// mounted, and a session started meanwhile must not mount the same upper
// and work dirs (TestTwoSessionsOfAProjectShareNoCacheLayer says why).
// Before the helper shared the hold, the set was free as soon as shellgate
// was gone.
func TestViewCacheLayersHeldWhileTheHelperLives(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cache := filepath.Join(l.home, ".npm")
	must(t, os.MkdirAll(cache, 0o755))
	spec := l.spec()
	spec.Caches = []string{cache}
	project := filepath.Join(l.base, "store")
	spec.CacheStore = project
	s := start(t, spec)
	if got, code := run(t, s, l.root, "echo x > ~/.npm/w && cat ~/.npm/w"); code != 0 || got != "x\n" {
		t.Fatalf("the cache in the session: %q (exit %d)", got, code)
	}
	// shellgate's own descriptor of the hold gone, as when it dies: the
	// hold's open file is then the helper's alone.
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	must(t, unix.Dup3(null, s.layers.Fd(), unix.O_CLOEXEC))
	unix.Close(null)
	other, err := cachestore.ClaimLayers(project)
	must(t, err)
	if other.Dir() == project {
		t.Errorf("with the helper alive, another session took its set of layers, %s", other.Dir())
	}
	must(t, other.Release())
	s.Close()
	after, err := cachestore.ClaimLayers(project)
	must(t, err)
	if after.Dir() != project {
		t.Errorf("with the helper gone, a session took %s, want the project's own set", after.Dir())
	}
	must(t, after.Release())
}
