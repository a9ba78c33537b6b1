package copyup

import (
	"bytes"
	"errors"
	"fmt"
	"go.uber.org/goleak"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/notify"
	"github.com/shellgate/shellgate/internal/seccomp"
	"golang.org/x/sys/unix"
)

// The test binary plays three parts, chosen by roleEnv: the test, a session
// (whose locked thread is guarded and runs a script) and a racer, a Go
// program the script may start.
const roleEnv = "COPYUP_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "session":
		os.Exit(session(os.Args[len(os.Args)-1]))
	case "racer":
		os.Exit(racer(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	case "raw":
		os.Exit(raw(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	case "rawmode":
		os.Exit(rawMode(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	case "opener":
		os.Exit(opens(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	case "unlinker":
		os.Exit(unlinker(os.Args[len(os.Args)-1]))
	case "creator":
		os.Exit(creations(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	}
	goleak.VerifyTestMain(m)
}

// session guards a locked thread and runs the script from it with bash.
func session(script string) int {
	runtime.LockOSThread()
	unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	o, err := New(-1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "opener:", err)
		return 3
	}
	calls := seccomp.WriteOpens
	if dir := os.Getenv(stagerEnv); dir != "" {
		o.SetStager(testStager{dir})
		calls |= seccomp.Creations
	}
	if dir := os.Getenv(linksEnv); dir != "" {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "links:", err)
			return 3
		}
		o.SetStoreLinks(fd, linksMax)
	}
	listener, err := seccomp.InstallNotify(calls)
	if err != nil {
		fmt.Fprintln(os.Stderr, "filter:", err)
		return 3
	}
	h := o.Handle
	if os.Getenv(floorEnv) != "" {
		h = func(c *notify.Caller, n *notify.Notif) notify.Result { return notify.Fail(unix.ENOENT) }
	}
	go notify.Serve(listener, h)
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
	cmd.Env = append(os.Environ(), roleEnv+"=racer")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "script:", err)
		return 1
	}
	return 0
}

// runSession runs script in a guarded session in dir and returns its
// standard output.
func runSession(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", script)
	cmd.Env = append(os.Environ(), roleEnv+"=session", "COPYUP_BIN="+os.Args[0])
	cmd.Dir = dir
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		if strings.Contains(errs.String(), "filter:") || strings.Contains(errs.String(), "opener:") {
			t.Skip("no notifying seccomp filter here:", errs.String())
		}
		t.Fatalf("session: %v\n%s%s", err, out.String(), errs.String())
	}
	if errs.Len() > 0 {
		t.Logf("stderr: %s", errs.String())
	}
	return out.String()
}

func lab(t *testing.T) (root, store string) {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "copyup-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, store = filepath.Join(dir, "root"), filepath.Join(dir, "store")
	for _, d := range []string{root + "/nm", store} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, store
}

// link makes store/name and a hard link to it at root/nm/name.
func link(t *testing.T, root, store, name string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(store, name), []byte("original\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(store, name), filepath.Join(root, "nm", name)); err != nil {
		t.Fatal(err)
	}
}

// Every way of writing a file through a hard link writes a copy: the
// store's file is unchanged, the root's has what was written and a name of
// its own, with its mode and times kept.
func TestWritesThroughAHardLinkCopyUp(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	writes := map[string]string{
		"append":         `echo PWN >> nm/append.js`,
		"truncate":       `echo PWN > nm/truncate.js`,
		"r+":             `python3 -c "f=open('nm/rplus.js','r+'); f.write('PWN')"`,
		"dd notrunc":     `echo PWN | dd of=nm/dd.js conv=notrunc status=none`,
		"truncate(2)":    `python3 -c "import os; os.truncate('nm/truncsys.js', 3)"`,
		"O_CREAT":        `python3 -c "import os; os.close(os.open('nm/creat.js', os.O_CREAT|os.O_WRONLY|os.O_TRUNC))"`,
		"rdonly trunc":   `python3 -c "import os; os.close(os.open('nm/rdtrunc.js', os.O_RDONLY|os.O_TRUNC))"`,
		"proc self cwd":  `echo PWN >> /proc/self/cwd/nm/procself.js`,
		"absolute":       `echo PWN >> "$PWD/nm/absolute.js"`,
		"symlink":        `ln -s nm/symlink.js sl && echo PWN >> sl`,
		"dotdot":         `mkdir -p d && echo PWN >> d/../nm/dotdot.js`,
		"dev fd reopen":  `exec 3<nm/devfd.js; echo PWN >> /dev/fd/3`,
		"proc fd reopen": `exec 4<nm/procfd.js; echo PWN > /proc/self/fd/4`,
		"mmap": `python3 -c "
import mmap
f=open('nm/mmap.js','r+b'); m=mmap.mmap(f.fileno(),0); m[0:3]=b'PWN'; m.flush()"`,
		"cp over": `echo PWN > src.txt && cp src.txt nm/cp.js`,
		"racer":   `"$COPYUP_BIN" nm/racer.js safe.txt`,
		"openat2": `COPYUP_TEST_ROLE=raw "$COPYUP_BIN" openat2 nm/openat2.js`,
		"creat":   `COPYUP_TEST_ROLE=raw "$COPYUP_BIN" creat nm/creatsys.js`,
		"open":    `COPYUP_TEST_ROLE=raw "$COPYUP_BIN" open nm/opensys.js`,
	}
	var script strings.Builder
	names := map[string]string{}
	for what, sh := range writes {
		name := strings.Fields(strings.NewReplacer("nm/", " ", "'", " ", `"`, " ", ";", " ", ")", " ").Replace(sh[strings.Index(sh, "nm/"):]))[0]
		names[what] = name
		link(t, root, store, name, 0o644)
		fmt.Fprintf(&script, "( %s ) || echo 'FAILED: %s'\n", sh, what)
	}
	before, _ := os.Stat(filepath.Join(store, "append.js"))
	out := runSession(t, root, script.String())
	if strings.Contains(out, "FAILED") {
		t.Errorf("some writes failed:\n%s", out)
	}
	for what, name := range names {
		if b, _ := os.ReadFile(filepath.Join(store, name)); string(b) != "original\n" {
			t.Errorf("%s: the store's file became %q", what, b)
		}
		if what == "racer" { // which name each open found is the race's
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, "nm", name), &st); err != nil || st.Nlink != 1 {
			t.Errorf("%s: the root's file has %d names (%v)", what, st.Nlink, err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "nm", name)); string(b) == "original\n" && !strings.Contains("truncate(2) O_CREAT rdonly trunc creat", what) {
			t.Errorf("%s: the root's file was not written", what)
		}
	}
	after, _ := os.Stat(filepath.Join(root, "nm/append.js"))
	if after.Mode() != before.Mode() {
		t.Errorf("mode %v, was %v", after.Mode(), before.Mode())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "nm/append.js")); string(b) != "original\nPWN\n" {
		t.Errorf("append wrote %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "nm/truncsys.js")); string(b) != "ori" {
		t.Errorf("truncate(2) left %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "nm/.shellgate-copyup-*")); len(left) > 0 {
		t.Errorf("copies left behind: %v", left)
	}
}

// An open that truncates a file with another name puts an empty copy in
// its place, none of its bytes copied: a file the caller may write but not
// read (0200) is truncated as without the guard (a copy of its bytes would
// need to read it), and its other name keeps them.
func TestTruncatingThroughAHardLinkCopiesNoBytes(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	for _, name := range []string{"gt.bin", "trunc0.bin"} {
		link(t, root, store, name, 0o200)
	}
	out := runSession(t, root, `echo PWN > nm/gt.bin || echo FAILED gt
python3 -c "import os; os.truncate('nm/trunc0.bin', 0)" || echo FAILED truncate`)
	if strings.Contains(out, "FAILED") {
		t.Errorf("truncating a write-only linked file failed:\n%s", out)
	}
	for name, want := range map[string]string{"gt.bin": "PWN\n", "trunc0.bin": ""} {
		os.Chmod(filepath.Join(store, name), 0o600)
		os.Chmod(filepath.Join(root, "nm", name), 0o600)
		if b, _ := os.ReadFile(filepath.Join(store, name)); string(b) != "original\n" {
			t.Errorf("%s: the store's file became %q", name, b)
		}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, "nm", name), &st); err != nil || st.Nlink != 1 {
			t.Errorf("%s: the root's file has %d names (%v)", name, st.Nlink, err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "nm", name)); string(b) != want {
			t.Errorf("%s: the root's file holds %q, want %q", name, b, want)
		}
	}
}

// racer opens its two paths for writing with O_TRUNC from one buffer, while
// another thread swaps the buffer's contents between them: whatever the
// kernel would have read, the linked file is never truncated in place.
func racer(linked, safe string) int {
	buf := make([]byte, 64)
	set := func(s string) { copy(buf, s+"\x00") }
	set(safe)
	var stop atomic.Bool
	go func() {
		for !stop.Load() {
			set(linked)
			set(safe)
		}
	}()
	p := uintptr(unsafe.Pointer(&buf[0]))
	cwd := unix.AT_FDCWD
	for i := 0; i < 2000; i++ {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), p, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644, 0, 0)
		if errno == 0 {
			unix.Close(int(fd))
		}
	}
	stop.Store(true)
	time.Sleep(time.Millisecond)
	runtime.KeepAlive(buf)
	return 0
}

// Ordinary writes behave as without the guard: the standard streams by
// their /dev and /proc names, a symlink to one, /dev/null, a FIFO, a new
// file with the caller's umask, an empty file marked modified by `>`, and a
// descriptor that stays open across exec unless O_CLOEXEC was asked.
func TestOrdinaryWritesUnchanged(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	os.WriteFile(filepath.Join(root, "empty"), nil, 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(root, "empty"), old, old)
	out := runSession(t, root, `
echo stdout > /dev/stdout
echo fd1 > /dev/fd/1
echo self > /proc/self/fd/1
echo thread > /proc/thread-self/fd/1
ln -s /dev/stdout out.log && echo symlinked > out.log
echo gone > /dev/null
{ echo tee | tee /dev/fd/3 >/dev/null; } 3>&1
(umask 077; echo x > private)
stat -c %a private
> empty
mkfifo p; (cat p &) ; echo through-fifo > p; wait
python3 -c "
import os, subprocess
a = os.open('keep', os.O_WRONLY|os.O_CREAT, 0o644)
b = os.open('shut', os.O_WRONLY|os.O_CREAT|os.O_CLOEXEC, 0o644)
os.set_inheritable(a, True)
print('inherited', subprocess.run(['bash','-c','ls /proc/self/fd/%d /proc/self/fd/%d 2>/dev/null | wc -l' % (a, b)], close_fds=False, capture_output=True, text=True).stdout.strip())
print('cloexec', os.get_inheritable(b))
"
echo $((1+1)) > n && cat n
echo 500 > /proc/self/oom_score_adj && echo oom $(cat /proc/self/oom_score_adj)
(cd /proc/self && echo 600 > ../self/oom_score_adj && echo oom $(cat /proc/self/oom_score_adj))
echo helper $(cat /proc/$PPID/oom_score_adj)
deep=$(printf 'dir/%.0s' $(seq 100))x; mkdir -p "$(dirname $deep)" && echo long-path > "$deep" && cat "$deep"
python3 -c "
import os
try: os.open('a' * 5000, os.O_WRONLY)
except OSError as e: print('too long', e.errno == 36)"
python3 -c "
import ctypes
l = ctypes.CDLL(None, use_errno=True)
print('landlock', l.syscall(444, None, ctypes.c_size_t(0), 1), ctypes.get_errno())"
`)
	for _, want := range []string{"stdout\n", "fd1\n", "self\n", "thread\n", "symlinked\n", "tee\n", "600\n", "through-fifo\n", "inherited 1\n", "cloexec False\n", "2\n", "oom 500\n", "oom 600\n", "helper 0\n", "long-path\n", "too long True\n", "landlock -1 38\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if st, _ := os.Stat(filepath.Join(root, "empty")); !st.ModTime().After(old.Add(time.Minute)) {
		t.Errorf("`> empty` left the modification time at %v", st.ModTime())
	}
}

// raw writes "PWN" to path by the system call named: openat2, creat or
// open (the last two on amd64 only; elsewhere it writes by openat).
func raw(call, path string) int {
	var fd int
	var err error
	switch call {
	case "openat2":
		// A read by openat2, handed over too, leaves the link alone.
		r, rerr := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC})
		var st unix.Stat_t
		if rerr != nil || unix.Fstat(r, &st) != nil || st.Nlink != 2 {
			fmt.Fprintln(os.Stderr, "openat2 for reading:", rerr, st.Nlink)
			return 1
		}
		unix.Close(r)
		fd, err = unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_WRONLY | unix.O_APPEND | unix.O_CLOEXEC})
	case "creat", "open":
		p, _ := unix.BytePtrFromString(path)
		nr, flags := uintptr(sysCreat), uintptr(0o644)
		if call == "open" {
			nr, flags = sysOpen, unix.O_RDWR
		}
		if runtime.GOARCH != "amd64" {
			fd, err = unix.Open(path, unix.O_RDWR, 0)
			break
		}
		r, _, errno := unix.Syscall(nr, uintptr(unsafe.Pointer(p)), flags, 0o644)
		if fd = int(r); errno != 0 {
			err = errno
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, call, err)
		return 1
	}
	unix.Write(fd, []byte("PWN"))
	unix.Close(fd)
	return 0
}

// Every way of changing a linked file's mode changes a copy's: a mode is the
// inode's, so `chmod 000` of a package store's file in node_modules would
// break every project linked to it. The store's file keeps its mode; the
// root's gets the new one, a name of its own and the same bytes.
func TestModeChangesThroughAHardLinkCopyUp(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	changes := []struct{ what, name, sh string }{
		{"chmod", "chmod.js", `chmod 600 nm/chmod.js`},
		{"symbolic", "symbolic.js", `chmod go-r nm/symbolic.js`},
		{"python", "python.js", `python3 -c "import os; os.chmod('nm/python.js', 0o600)"`},
		{"dir fd", "dirfd.js", `python3 -c "import os; os.chmod('dirfd.js', 0o600, dir_fd=os.open('nm', os.O_RDONLY))"`},
		{"fchmod", "fchmod.js", `python3 -c "import os; os.fchmod(os.open('nm/fchmod.js', os.O_RDONLY), 0o600)"`},
		{"proc fd path", "procfd.js", `exec 3<nm/procfd.js; chmod 600 /proc/self/fd/3`},
		{"symlink", "symlink.js", `ln -s nm/symlink.js sl && chmod 600 sl`},
		{"find exec", "findexec.js", `find nm -name findexec.js -exec chmod 600 {} +`},
		{"chmod -R", "recursive.js", `mkdir -p nm/sub && mv nm/recursive.js nm/sub/ && chmod -R go-r nm/sub && mv nm/sub/recursive.js nm/`},
		{"fchmodat2 path", "fchmodat2.js", `COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" fchmodat2 nm/fchmodat2.js`},
		{"fchmodat2 fd", "empty.js", `COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" fchmodat2-empty nm/empty.js`},
	}
	var script strings.Builder
	for _, c := range changes {
		link(t, root, store, c.name, 0o644)
		fmt.Fprintf(&script, "( %s ) || echo 'FAILED: %s'\n", c.sh, c.what)
	}
	out := runSession(t, root, script.String())
	if strings.Contains(out, "FAILED") {
		t.Errorf("some changes failed:\n%s", out)
	}
	for _, c := range changes {
		what, name := c.what, c.name
		if st, err := os.Stat(filepath.Join(store, name)); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: the store's %s has mode %v (%v)", what, name, st.Mode(), err)
		}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, "nm", name), &st); err != nil || st.Nlink != 1 || st.Mode&0o777 != 0o600 {
			t.Errorf("%s: the root's %s has mode %o and %d names (%v)", what, name, st.Mode&0o777, st.Nlink, err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "nm", name)); string(b) != "original\n" {
			t.Errorf("%s: the root's file holds %q", what, b)
		}
	}
}

// Every way of setting a linked file's times sets a copy's: times are the
// inode's, and build tools compare them, so a store's file keeps its own.
func TestTimesThroughAHardLinkCopyUp(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	changes := []struct{ what, name, sh string }{
		{"python", "python.js", `python3 -c "import os; os.utime('nm/python.js', (0, 0))"`},
		{"now", "now.js", `python3 -c "import os; os.utime('nm/now.js')"`},
		{"dir fd", "dirfd.js", `python3 -c "import os; os.utime('dirfd.js', (0, 0), dir_fd=os.open('nm', os.O_RDONLY))"`},
		{"futimens", "futimens.js", `python3 -c "import os; os.utime(os.open('nm/futimens.js', os.O_RDONLY), (0, 0))"`},
		{"proc fd path", "procfd.js", `exec 3<nm/procfd.js; python3 -c "import os; os.utime('/proc/self/fd/3', (0, 0))"`},
		{"touch", "touch.js", `touch -d @0 nm/touch.js`},
		{"touch -h", "touchh.js", `touch -h -d @0 nm/touchh.js`},
		{"symlink", "symlink.js", `ln -s nm/symlink.js sl && python3 -c "import os; os.utime('sl', (0, 0))"`},
		{"perl", "perl.js", `perl -e 'utime 0, 0, "nm/perl.js" or die'`},
		{"utimes", "utimes.js", `COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" utimes nm/utimes.js`},
		{"utime", "utime.js", `COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" utime nm/utime.js`},
		{"futimesat", "futimesat.js", `COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" futimesat nm/futimesat.js`},
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	var script strings.Builder
	for _, c := range changes {
		link(t, root, store, c.name, 0o644)
		if err := os.Chtimes(filepath.Join(store, c.name), old, old); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&script, "( %s ) || echo 'FAILED: %s'\n", c.sh, c.what)
	}
	out := runSession(t, root, script.String())
	if strings.Contains(out, "FAILED") {
		t.Errorf("some changes failed:\n%s", out)
	}
	for _, c := range changes {
		if st, err := os.Stat(filepath.Join(store, c.name)); err != nil || !st.ModTime().Equal(old) {
			t.Errorf("%s: the store's %s was modified at %v (%v)", c.what, c.name, st.ModTime(), err)
		}
		var st unix.Stat_t
		err := unix.Stat(filepath.Join(root, "nm", c.name), &st)
		now := c.what == "now"
		if err != nil || st.Nlink != 1 || !now && st.Mtim.Sec != 0 || now && st.Mtim.Sec <= old.Unix() {
			t.Errorf("%s: the root's %s has mtime %d and %d names (%v)", c.what, c.name, st.Mtim.Sec, st.Nlink, err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "nm", c.name)); string(b) != "original\n" {
			t.Errorf("%s: the root's file holds %q", c.what, b)
		}
	}
}

// A symlink's own times, set through a name it shares with a store's
// symlink (a hard link to a symlink), are set on a symlink of the root's
// own, to the same target: the store's keeps its times.
func TestSymlinkTimesThroughAHardLinkCopyUp(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	oldTS := []unix.Timespec{unix.NsecToTimespec(old.UnixNano()), unix.NsecToTimespec(old.UnixNano())}
	for _, name := range []string{"touch", "python"} {
		if err := errors.Join(os.Symlink("target-"+name, filepath.Join(store, name)),
			unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(store, name), oldTS, unix.AT_SYMLINK_NOFOLLOW),
			os.Link(filepath.Join(store, name), filepath.Join(root, "nm", name))); err != nil {
			t.Fatal(err)
		}
	}
	out := runSession(t, root, `touch -h -d @0 nm/touch || echo FAILED touch
python3 -c "import os; os.utime('nm/python', (0, 0), follow_symlinks=False)" || echo FAILED python
`)
	if strings.Contains(out, "FAILED") {
		t.Errorf("some changes failed:\n%s", out)
	}
	for _, name := range []string{"touch", "python"} {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(store, name), &st); err != nil || st.Mtim.Sec != old.Unix() {
			t.Errorf("%s: the store's symlink has mtime %d (%v)", name, st.Mtim.Sec, err)
		}
		err := unix.Lstat(filepath.Join(root, "nm", name), &st)
		target, _ := os.Readlink(filepath.Join(root, "nm", name))
		if err != nil || st.Nlink != 1 || st.Mtim.Sec != 0 || target != "target-"+name {
			t.Errorf("%s: the root's symlink to %q has mtime %d and %d names (%v)", name, target, st.Mtim.Sec, st.Nlink, err)
		}
	}
}

// Times set on a file with one name, on a symlink itself, or refused, are
// as the kernel's own.
func TestOrdinaryTimesUnchanged(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	out := runSession(t, root, `
echo x > own && touch -d @1000 own && stat -c 'own %Y' own
ln -s own link && touch -h -d @2000 link && stat -c 'link %Y' link && stat -L -c 'target %Y' link
touch -d @3000 missing/x 2>/dev/null || echo missing failed
COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" futimens-opath own
COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" utimensat-badnsec own
COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" utimensat-omit own && stat -c 'omit %Y' own
`)
	for _, want := range []string{"own 1000\n", "link 2000\n", "target 1000\n", "missing failed\n",
		"futimens-opath EBADF\n", "utimensat-badnsec EINVAL\n", "omit 1000\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A change of mode of a file with one name, a directory, a symlink or a
// descriptor behaves as the kernel's own: the same modes and the same errors.
func TestOrdinaryModeChangesUnchanged(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	out := runSession(t, root, `
echo x > own && chmod 640 own && stat -c 'own %a' own
mkdir d && chmod 700 d && stat -c 'dir %a' d
chmod 600 missing 2>/dev/null || echo missing failed
(umask 077; touch u) && chmod u+x u && stat -c 'u %a' u
python3 -c "import os; os.chmod('.', 0o755); print('cwd', oct(os.stat('.').st_mode & 0o777))"
ln -s own link
COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" fchmod-opath own
COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" fchmodat2-nofollow link
COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" fchmodat2-flags own
`)
	for _, want := range []string{"own 640\n", "dir 700\n", "missing failed\n", "u 700\n", "cwd 0o755\n",
		"fchmod-opath EBADF\n", "fchmodat2-nofollow ENOTSUP\n", "fchmodat2-flags EINVAL\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// rawMode changes path's mode to 0600 by the call named, or prints the
// error a call the kernel refuses gets: fchmodat2 by path or by an O_PATH
// descriptor and an empty path, fchmod of an O_PATH descriptor, fchmodat2
// of a symlink not followed, fchmodat2 with an unknown flag; or sets its
// user.new by setxattrat.
func rawMode(call, path string) int {
	fchmodat2 := func(dirfd int, path string, flags int) error {
		p, _ := unix.BytePtrFromString(path)
		_, _, errno := unix.Syscall6(452, uintptr(dirfd), uintptr(unsafe.Pointer(p)), 0o600, uintptr(flags), 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	}
	var err error
	switch call {
	case "fchmodat2":
		err = fchmodat2(unix.AT_FDCWD, path, 0)
	case "fchmodat2-empty", "fchmod-opath":
		fd, oerr := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if oerr != nil {
			fmt.Fprintln(os.Stderr, call, oerr)
			return 1
		}
		if call == "fchmod-opath" {
			err = unix.Fchmod(fd, 0o600)
		} else {
			err = fchmodat2(fd, "", unix.AT_EMPTY_PATH)
		}
	case "fchmodat2-nofollow":
		err = fchmodat2(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW)
	case "fchmodat2-flags":
		err = fchmodat2(unix.AT_FDCWD, path, 0x10000)
	case "setxattrat": // struct xattr_args: value, size, flags
		p, _ := unix.BytePtrFromString(path)
		name, _ := unix.BytePtrFromString("user.new")
		value := []byte("1")
		args := struct {
			value       uint64
			size, flags uint32
		}{uint64(uintptr(unsafe.Pointer(&value[0]))), 1, 0}
		// AT_FDCWD is -100: ^99.
		_, _, errno := unix.Syscall6(463, uintptr(^uintptr(99)), uintptr(unsafe.Pointer(p)), 0, uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args))
		if errno != 0 {
			err = errno
		}
	case "utimes", "utime", "futimesat":
		p, _ := unix.BytePtrFromString(path)
		zero := make([]byte, 32) // two zero timevals, or a zero utimbuf
		nr, args := map[string]uintptr{"utimes": 235, "utime": 132, "futimesat": 261}[call], []uintptr{uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&zero[0])), 0}
		if call == "futimesat" {
			args = []uintptr{^uintptr(99), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&zero[0]))} // AT_FDCWD
		}
		if runtime.GOARCH != "amd64" { // the legacy calls exist on amd64 only
			err = unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{{}, {}}, 0)
			break
		}
		if _, _, errno := unix.Syscall(nr, args[0], args[1], args[2]); errno != 0 {
			err = errno
		}
	case "futimens-opath":
		fd, oerr := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if oerr != nil {
			fmt.Fprintln(os.Stderr, call, oerr)
			return 1
		}
		ts := []unix.Timespec{{}, {}}
		if _, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0); errno != 0 {
			err = errno
		}
	case "utimensat-badnsec":
		err = unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{{Nsec: 2e9}, {}}, 0)
	case "utimensat-omit":
		err = unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}, 0)
	}
	if err != nil {
		fmt.Println(call, unix.ErrnoName(err.(unix.Errno)))
	}
	return 0
}

// A file whose names in the root are gone keeps its name outside: a write
// through a descriptor still open on it (reopened by /proc/self/fd, /dev/fd
// or an O_PATH descriptor, or an open that races the unlink) must not reach
// it, though it has one link left.
func TestAFileNamedOnlyOutsideIsNotWritten(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	writes := map[string]string{
		"proc fd":   `exec 3<nm/procfd.js; rm nm/procfd.js; echo PWN >> /proc/self/fd/3`,
		"dev fd":    `exec 4<nm/devfd.js; mv nm/devfd.js nm/moved.js; rm nm/moved.js; echo PWN > /dev/fd/4`,
		"O_PATH":    `python3 -c "import os; p=os.open('nm/opath.js', os.O_PATH); os.unlink('nm/opath.js'); os.write(os.open('/proc/self/fd/%d' % p, os.O_WRONLY|os.O_APPEND), b'PWN')"`,
		"truncate":  `exec 5<nm/trunc.js; rm nm/trunc.js; python3 -c "import os; os.truncate('/proc/self/fd/5', 0)"`,
		"unlinker":  `COPYUP_TEST_ROLE=unlinker "$COPYUP_BIN" nm/unlinker.js`,
		"same name": `exec 6<nm/same.js; rm nm/same.js; echo mine > nm/same.js; echo PWN >> /proc/self/fd/6`,
	}
	var script strings.Builder
	for what, sh := range writes {
		name := strings.Fields(strings.NewReplacer("nm/", " ", "'", " ", ";", " ").Replace(sh[strings.Index(sh, "nm/"):]))[0]
		link(t, root, store, name, 0o644)
		fmt.Fprintf(&script, "( %s ) 2>/dev/null && echo 'WROTE: %s'\n", sh, what)
	}
	out := runSession(t, root, script.String()+"true\n")
	for what, sh := range writes {
		name := strings.Fields(strings.NewReplacer("nm/", " ", "'", " ", ";", " ").Replace(sh[strings.Index(sh, "nm/"):]))[0]
		if b, _ := os.ReadFile(filepath.Join(store, name)); string(b) != "original\n" {
			t.Errorf("%s: the store's file became %q (%s)", what, b, out)
		}
	}
	// A file deleted everywhere is the command's alone: writing it is fine.
	if out := runSession(t, root, `echo x > own && exec 3<own && rm own && echo y >> /proc/self/fd/3 && echo written`); out != "written\n" {
		t.Errorf("a file of no name was not written: %q", out)
	}
}

// unlinker keeps putting path's file (by a descriptor of it) back at path
// and removing it, while another thread opens path for writing: an open
// that finds the name and counts the links after the unlink must not hand
// out the file, which then has only its name outside.
func unlinker(path string) int {
	keep, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return 1
	}
	var stop atomic.Bool
	go func() {
		self := fmt.Sprintf("/proc/self/fd/%d", keep)
		for !stop.Load() {
			unix.Linkat(unix.AT_FDCWD, self, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
			unix.Unlink(path)
		}
	}()
	for i := 0; i < 3000; i++ {
		if fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0); err == nil {
			unix.Write(fd, []byte("PWN"))
			unix.Close(fd)
		}
	}
	stop.Store(true)
	return 0
}

// /dev/tty is the caller's terminal, never the helper's: a command with
// none (after setsid) gets ENXIO, though the helper was started from the
// user's terminal, and a command with a terminal of its own writes there.
// Opens with bash's flags, through a relative path and a symlink, are
// answered without a confined thread (noTerminal), and still reach nothing:
// no write and no TIOCSTI lands on the helper's terminal.
func TestDevTTYIsTheCallers(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$", `python3 -c "
import os, errno
os.setsid()
try:
    os.open('/dev/tty', os.O_RDWR)
    print('opened')
except OSError as e:
    print(errno.errorcode[e.errno])
" > none.txt 2>&1
ln -s /dev/tty ttylink
python3 -c "
import os, errno, fcntl, termios
os.setsid()
for path in ('/dev/tty', os.path.relpath('/dev/tty'), 'ttylink', '/proc/self/root/dev/tty'):
    for flags in (os.O_RDWR | os.O_NONBLOCK, os.O_WRONLY | os.O_NOCTTY, os.O_RDWR | os.O_TRUNC):
        try:
            fd = os.open(path, flags)
        except OSError as e:
            print(errno.errorcode[e.errno])
            continue
        print('opened')
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, b'X')
        except OSError:
            pass
        os.write(fd, b'pwned')
" > attack.txt 2>&1
python3 -c "
import os, fcntl, termios, select
m, s = os.openpty()
if os.fork() == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    fd = os.open('/dev/tty', os.O_WRONLY)
    os.write(fd, b'own-terminal')
    os._exit(0)
os.wait()
print(os.read(m, 100).decode() if select.select([m], [], [], 20)[0] else 'nothing')
" > own.txt 2>&1`)
	cmd.Env = append(os.Environ(), roleEnv+"=session")
	cmd.Dir = root
	helperTTY, err := pty.Start(cmd) // the session is its terminal's leader
	if err != nil {
		t.Fatal(err)
	}
	defer helperTTY.Close()
	seen := make(chan string)
	go func() {
		b, _ := io.ReadAll(helperTTY)
		seen <- string(b)
	}()
	cmd.Wait()
	helperTTY.Close()
	onHelpers := <-seen
	if strings.Contains(onHelpers, "filter:") || strings.Contains(onHelpers, "opener:") {
		t.Skip("no notifying seccomp filter here:", onHelpers)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "none.txt")); string(b) != "ENXIO\n" {
		t.Errorf("a command without a terminal opened /dev/tty: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "attack.txt")); string(b) != strings.Repeat("ENXIO\n", 12) {
		t.Errorf("a command without a terminal opened /dev/tty: %q", b)
	}
	if strings.Contains(onHelpers, "pwned") || strings.Contains(onHelpers, "X") {
		t.Errorf("a command reached the helper's terminal: %q", onHelpers)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "own.txt")); !strings.Contains(string(b), "own-terminal") {
		t.Errorf("a command's own terminal did not get its write: %q (helper's terminal: %q)", b, onHelpers)
	}
}

// A command killed while its open of a FIFO waits for a reader leaves no
// thread of the helper waiting: more of them than the helper runs at once
// do not stall the session's later writes. A FIFO whose reader comes is
// written as without the guard, blocking.
func TestAbandonedFIFOOpensDoNotStallTheSession(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	out := runSession(t, root, fmt.Sprintf(`
for i in $(seq %d); do mkfifo f$i; timeout 1 sh -c "echo x > f$i" & done; wait
timeout 30 sh -c 'echo ok > after' && cat after || echo stalled
sleep 1; echo threads $(ls /proc/$PPID/task | wc -l)
mkfifo g; (sleep 0.5; timeout 30 cat g) & timeout 30 python3 -c "
import os, fcntl
fd = os.open('g', os.O_WRONLY)
print('blocking', fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK == 0)
os.write(fd, b'through\n')"; wait
`, maxWorkers+4))
	for _, want := range []string{"ok\n", "blocking True\n", "through\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var threads int
	if _, err := fmt.Sscanf(out[strings.Index(out, "threads "):], "threads %d", &threads); err != nil || threads >= maxWorkers {
		t.Errorf("the helper has %d threads after its callers are gone (%v)", threads, err)
	}
}

// openat2 answers as the kernel does: a mode without O_CREAT is refused,
// one with O_CREAT opens an existing file as well as it makes a new one.
func TestOpenat2ChecksItsMode(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	out := runSession(t, root, `python3 -c "
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def openat2(path, flags, mode):
    how = struct.pack('QQQ', flags, mode, 0)
    r = libc.syscall(437, -100, path, how, ctypes.c_size_t(len(how)))
    return 'fd' if r >= 0 else errno.errorcode[ctypes.get_errno()]
open('existing', 'w').close()
print('mode alone', openat2(b'existing', os.O_WRONLY, 0o644))
print('creat existing', openat2(b'existing', os.O_WRONLY|os.O_CREAT, 0o644))
print('creat new', openat2(b'new', os.O_WRONLY|os.O_CREAT, 0o644))
"`)
	if want := "mode alone EINVAL\ncreat existing fd\ncreat new fd\n"; out != want {
		t.Errorf("got\n%swant\n%s", out, want)
	}
}

// A command that chroots itself (in a user namespace of its own) stays in
// its root: ".." of a relative path, or of a symlink, stops there as the
// kernel stops it, and names inside still work.
func TestChrootedCallerStaysInItsRoot(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	os.MkdirAll(filepath.Join(root, "jail/sub"), 0o755)
	os.WriteFile(filepath.Join(root, "v"), []byte("outside-jail\n"), 0o644)
	judged(t, root) // names made are judged too
	out := runSession(t, root, `python3 -c "
import ctypes, os
if ctypes.CDLL(None).unshare(0x10000000) != 0:
    print('no user namespace'); raise SystemExit
os.chdir('jail'); os.chroot('.'); os.chdir('/sub')
for name in ['../../v', '../v']:
    try:
        open(name, 'a').write('ESCAPED\n')
    except OSError:
        pass
os.symlink('../../../v', 'esc')
open('esc', 'a').write('via-symlink\n')
open('../in-jail', 'w').write('ok')
print(open('/in-jail').read(), open('/v').read().strip())
os.symlink('/', 'top')
os.mkdir('top/made'); open('top/made/f', 'w').write('x')
print(os.path.isfile('/made/f'))
"`)
	if strings.Contains(out, "no user namespace") {
		t.Skip("no user namespace for the command here")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "v")); string(b) != "outside-jail\n" {
		t.Errorf("a chrooted command wrote above its root: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
		t.Errorf("a chrooted command made a name above its root, through an absolute symlink")
	}
	if want := "ok ESCAPED\nESCAPED\nvia-symlink\nTrue\n"; out != want {
		t.Errorf("inside the jail: got %q, want %q", out, want)
	}
}

// The helper's own /proc entries, which its threads may open past the
// ptrace checks the caller's kernel makes, are never opened for a command:
// not by their path, a bind mount or a reopened O_PATH descriptor. The
// command's own still are.
func TestHelpersProcEntriesStayClosed(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	out := runSession(t, root, `python3 -c "
import os, sys
helper = os.getppid()
def tryopen(what, path, flags):
    try:
        os.close(os.open(path, flags)); print('OPENED', what)
    except OSError:
        pass
tryopen('mem', '/proc/%d/mem' % helper, os.O_RDWR)
tryopen('fdinfo', '/proc/%d/fdinfo' % helper, os.O_RDONLY|os.O_TRUNC|os.O_DIRECTORY)
tryopen('task mem', '/proc/%d/task/%d/mem' % (helper, helper), os.O_RDWR)
p = os.open('/proc/%d/mem' % helper, os.O_PATH)
tryopen('O_PATH reopen', '/proc/self/fd/%d' % p, os.O_RDWR)
d = os.open('/proc/%d' % helper, os.O_PATH|os.O_DIRECTORY)
tryopen('dirfd', '/proc/self/fd/%d/mem' % d, os.O_RDWR)
tryopen('own', '/proc/self/oom_score_adj', os.O_WRONLY)
tryopen('own by ID', '/proc/%d/oom_score_adj' % os.getpid(), os.O_WRONLY)
print('done')
" $PPID`)
	if out != "OPENED own\nOPENED own by ID\ndone\n" {
		t.Errorf("got %q, want only the command's own entry opened", out)
	}
}

// Every way of changing a linked file's extended attributes changes a
// copy's: they are the inode's, and a POSIX ACL is its mode too (setfacl
// o+rw would make a package store's file world-writable). The store's file
// keeps its mode and attributes; the root's gets the change and a name of its
// own. setxattrat and removexattrat, whose arguments lie in memory, fail as
// on a kernel without them.
func TestXattrChangesThroughAHardLinkCopyUp(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	// user::rw- group::r-- other::rw-, as setfacl -m o::rw writes it.
	const acl = `b"\x02\x00\x00\x00\x01\x00\x06\x00\xff\xff\xff\xff\x04\x00\x04\x00\xff\xff\xff\xff\x20\x00\x06\x00\xff\xff\xff\xff"`
	changes := []struct{ what, name, sh string }{
		{"acl", "acl.js", `python3 -c 'import os; os.setxattr("nm/acl.js", "system.posix_acl_access", ` + acl + `)'`},
		{"setxattr", "set.js", `python3 -c 'import os; os.setxattr("nm/set.js", "user.new", b"1")'`},
		{"lsetxattr", "lset.js", `python3 -c 'import os; os.setxattr("nm/lset.js", "user.new", b"1", follow_symlinks=False)'`},
		{"fsetxattr", "fset.js", `python3 -c 'import os; os.setxattr(os.open("nm/fset.js", os.O_RDONLY), "user.new", b"1")'`},
		{"symlink", "symlink.js", `ln -s nm/symlink.js sl && python3 -c 'import os; os.setxattr("sl", "user.new", b"1")'`},
		{"proc fd path", "procfd.js", `exec 3<nm/procfd.js; python3 -c 'import os; os.setxattr("/proc/self/fd/3", "user.new", b"1")'`},
		{"removexattr", "remove.js", `python3 -c 'import os; os.removexattr("nm/remove.js", "user.old")'`},
		{"fremovexattr", "fremove.js", `python3 -c 'import os; os.removexattr(os.open("nm/fremove.js", os.O_RDONLY), "user.old")'`},
		{"setxattrat", "at.js", `COPYUP_TEST_ROLE=rawmode "$COPYUP_BIN" setxattrat nm/at.js`},
	}
	var script strings.Builder
	for _, c := range changes {
		link(t, root, store, c.name, 0o644)
		if err := unix.Setxattr(filepath.Join(store, c.name), "user.old", []byte("kept"), 0); err != nil {
			t.Skip("no user extended attributes here:", err)
		}
		fmt.Fprintf(&script, "( %s ) || echo 'FAILED: %s'\n", c.sh, c.what)
	}
	out := runSession(t, root, script.String())
	if strings.Count(out, "FAILED") != 0 {
		t.Errorf("some changes failed:\n%s", out)
	}
	for _, c := range changes {
		what, name := c.what, c.name
		storeFile, rootFile := filepath.Join(store, name), filepath.Join(root, "nm", name)
		if st, err := os.Stat(storeFile); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: the store's %s has mode %v (%v)", what, name, st.Mode(), err)
		}
		buf := make([]byte, 64)
		if n, err := unix.Getxattr(storeFile, "user.old", buf); err != nil || string(buf[:n]) != "kept" {
			t.Errorf("%s: the store's user.old went (%v)", what, err)
		}
		if _, err := unix.Getxattr(storeFile, "user.new", buf); err == nil {
			t.Errorf("%s: the store's %s got user.new", what, name)
		}
		if name == "at.js" {
			if !strings.Contains(out, "setxattrat ENOSYS") {
				t.Errorf("setxattrat was not refused:\n%s", out)
			}
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(rootFile, &st); err != nil || st.Nlink != 1 {
			t.Errorf("%s: the root's %s has %d names (%v)", what, name, st.Nlink, err)
		}
		if b, _ := os.ReadFile(rootFile); string(b) != "original\n" {
			t.Errorf("%s: the root's file holds %q", what, b)
		}
	}
	if st, err := os.Stat(filepath.Join(root, "nm/acl.js")); err != nil || st.Mode().Perm() != 0o646 {
		t.Errorf("the ACL did not reach the root's file: %v (%v)", st.Mode(), err)
	}
}

// Extended attributes of a file with one name, or of a symlink, behave as
// the kernel's own: the same values and the same errors.
func TestOrdinaryXattrChangesUnchanged(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	out := runSession(t, root, `
echo x > own && ln -s own link
python3 -c '
import errno, os
def try_(what, f):
    try:
        f(); print(what, "ok")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
try_("set", lambda: os.setxattr("own", "user.a", b"1"))
print("get", os.getxattr("own", "user.a"))
try_("create again", lambda: os.setxattr("own", "user.a", b"2", os.XATTR_CREATE))
try_("replace missing", lambda: os.setxattr("own", "user.b", b"2", os.XATTR_REPLACE))
try_("remove missing", lambda: os.removexattr("own", "user.b"))
try_("symlink nofollow", lambda: os.setxattr("link", "user.a", b"1", follow_symlinks=False))
try_("bad namespace", lambda: os.setxattr("own", "nonsense.a", b"1"))
try_("missing file", lambda: os.setxattr("missing", "user.a", b"1"))
try_("remove", lambda: os.removexattr("own", "user.a"))
print("left", os.listxattr("own"), os.stat("own").st_nlink)
'
`)
	for _, want := range []string{"set ok\n", "get b'1'\n", "create again EEXIST\n", "replace missing ENODATA\n",
		"remove missing ENODATA\n", "symlink nofollow EPERM\n", "bad namespace ENOTSUP\n", "missing file ENOENT\n",
		"remove ok\n", "left [] 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// stagerEnv names the directory a session's test stager stages in: it
// stages a name PROT, refuses REF, and takes ANC for a directory protected
// names lie in.
const stagerEnv = "COPYUP_TEST_STAGER"

type testStager struct{ dir string }

// judged has the sessions of the test, in root, judge the names they make
// with a testStager, which stages in the directory it returns.
func judged(t *testing.T, root string) string {
	t.Helper()
	staging := filepath.Join(filepath.Dir(root), "staging")
	if err := os.Mkdir(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(stagerEnv, staging)
	return staging
}

func (s testStager) Judge(p string, op Op) Verdict {
	if op == OpWrite {
		return Free // nothing is shown where it is staged
	}
	if op == OpMoveAway {
		if filepath.Base(p) == "PINNED" {
			return Crossed
		}
		return Free
	}
	switch filepath.Base(p) {
	case "PROT":
		if op == OpLink {
			return Refused
		}
		return Staged
	case "REF":
		return Refused
	case "ANC":
		switch op {
		case OpRename:
			return Crossed
		case OpLink:
			return Refused
		}
	}
	return Free
}

func (s testStager) Hidden(st *unix.Stat_t) bool { return false }
func (s testStager) Watched(name string) bool {
	return name == "PROT" || name == "REF" || name == "ANC" || name == "PINNED"
}

// Stage makes p's entry in a new directory of its own, shown nowhere.
func (s testStager) Stage(p string, _ Op, mk func(dir int, name string) unix.Errno) (unix.Errno, bool) {
	item, err := os.MkdirTemp(s.dir, "item-")
	if err != nil {
		return unix.EIO, true
	}
	d, err := unix.Open(item, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return unix.EIO, true
	}
	defer unix.Close(d)
	if errno := mk(d, filepath.Base(p)); errno != 0 {
		return errno, true
	}
	f, _ := os.OpenFile(filepath.Join(s.dir, "log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	fmt.Fprintln(f, p)
	f.Close()
	return 0, true
}

// Every way of making a protected name reaches the stager, wherever the
// path leads from and however it is spelled: none of them makes the name
// where the path says, and what was meant for it is staged. Names of other
// kinds are refused or crossed, and so is a rename of one the stager pins
// where it is (PINNED: mv copies it instead); every other name is made as
// asked.
func TestCreationsAreJudged(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	staging := judged(t, root)
	script := `
umask 022
mkdir PROT; echo mkdir=$?
mkdir -p sub/dir && python3 -c 'import os; fd = os.open("sub/dir", os.O_RDONLY); os.mkdir("/proc/self/fd/%d/../../PROT" % fd)'; echo procfd=$?
python3 -c 'import os; os.mkdir("sub/../PROT")' 2>/dev/null; echo dotdot=$?
python3 -c 'import os; os.mkdir(os.getcwd() + "/sub/PROT")'; echo abs=$?
echo x > sub/dir/PROT; echo open=$?
ln -s PROT dangling && python3 -c 'open("dangling", "w").write("y")' 2>/dev/null; echo dangling=$?
mkdir d && echo z > d/f && mv -T d sub/dir/../PROT 2>/dev/null; echo renamedir=$?
ln -s x sub/PROT; echo symlink=$?
echo l > lf && ln lf sub/dir/PROT; echo link=$?
mkfifo sub/dir/PROT; echo fifo=$?
echo r > REF; echo ref=$?
mkdir -p m/inner && mv -T m ANC; echo anc=$?; test -d ANC/inner && ! test -e m; echo ancinner=$?
ln -s m ANC; echo ancsym=$?
rm -rf ANC && mkdir ANC; echo ancmkdir=$?
mkdir -p PINNED/x && python3 -c 'import errno, os
try: os.rename("PINNED", "away")
except OSError as e: print("pinnedrename=" + errno.errorcode[e.errno])'
mv PINNED away && test -d away/x && ! test -e PINNED; echo pinnedmv=$?
mkdir -p a/b/c && mv a/b a/bb && ln -s bb a/s && ln a/bb/../../lf a/h && mkfifo a/p && echo ok > a/bb/c/f; echo free=$?
stat -c %a a/bb/c/f a/bb
`
	out := runSession(t, root, script)
	for _, want := range []string{"mkdir=0", "procfd=0", "dotdot=0", "abs=0", "ancinner=0", "renamedir=0", "symlink=1", "link=1", "fifo=1", "ref=1", "anc=0", "ancsym=1", "ancmkdir=0", "pinnedrename=EXDEV", "pinnedmv=0", "free=0", "644\n755\n"} {
		if !strings.Contains(out, want+"\n") && !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	var found []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && (d.Name() == "PROT" || d.Name() == "REF") {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("made where the path says: %v\n%s", found, out)
	}
	log, _ := os.ReadFile(filepath.Join(staging, "log"))
	if n := strings.Count(string(log), root+"/PROT\n"); n != 4 { // mkdir, through /proc/self/fd, with .., an open through a dangling symlink
		t.Errorf("%s staged %d times, not 4:\n%s", root+"/PROT", n, log)
	}
	for _, p := range []string{root + "/sub/PROT", root + "/sub/dir/PROT"} { // an absolute path and the rename, the open
		if !strings.Contains(string(log), p+"\n") {
			t.Errorf("%s not staged; staged:\n%s", p, log)
		}
	}
	if got, _ := filepath.Glob(filepath.Join(staging, "item-*", "PROT", "f")); len(got) != 1 {
		t.Errorf("the renamed directory was not staged: %v", got)
	}
}

// The umask a name is made with is the caller's at that call, though the
// supervisor keeps each thread's: a umask call, of the thread or of another
// sharing its umask, or a child's own, is seen at the next name made.
func TestKeptUmaskFollowsChanges(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	judged(t, root)
	script := `
umask 022; mkdir a; : > fa
umask 077; mkdir b; : > fb
(umask 002; mkdir c; : > fc)
mkdir d; : > fd
umask 022
python3 -c '
import os, threading
go, done = threading.Event(), threading.Event()
def make():
    os.mkdir("t1"); done.set(); go.wait(); os.mkdir("t2")
t = threading.Thread(target=make); t.start()
done.wait(); os.umask(0o077); go.set(); t.join()
os.umask(0); os.umask(0o027); os.mkdir("t3")
'
stat -c '%n %a' a fa b fb c fc d fd t1 t2 t3
`
	out := runSession(t, root, script)
	want := "a 755\nfa 644\nb 700\nfb 600\nc 775\nfc 664\nd 700\nfd 600\nt1 755\nt2 700\nt3 750\n"
	if !strings.Contains(out, want) {
		t.Errorf("modes:\n%s\nwant:\n%s", out, want)
	}
}

// A command in a user and mount namespace of its own can clone a tree of
// the root (open_tree) and make names through it: the supervisor reads
// that directory's path as "/", where no protected name lies. A name made
// there is judged as refused, never made unjudged; every other name is
// made as asked, and a tree cloned from "/" places its names where they are.
func TestDetachedTreesNamesAreJudged(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	staging := judged(t, root)
	script := `
python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000) != 0:
    print("nouserns"); raise SystemExit
def tree(p):
    fd = libc.syscall(428, -100, p.encode(), 1 | 0x8000 | 0o2000000)  # open_tree(OPEN_TREE_CLONE|AT_RECURSIVE)
    if fd < 0:
        print("noopentree", os.strerror(ctypes.get_errno())); raise SystemExit
    return fd
def try_(name, f):
    try:
        f(); print(name + "=0")
    except OSError as e:
        print(name + "=" + e.strerror)
t = tree(".")
try_("mkdir", lambda: os.mkdir("PROT", dir_fd=t))
try_("open", lambda: os.close(os.open("PROT", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=t)))
try_("openexcl", lambda: os.close(os.open("PROT", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=t)))
os.mkdir("d")
try_("rename", lambda: os.rename("d", "PROT", dst_dir_fd=t))
try_("procfd", lambda: os.mkdir("/proc/self/fd/%d/PROT" % t))
try_("free", lambda: os.mkdir("made", dir_fd=t))
r = tree("/")
try_("fromroot", lambda: os.mkdir(os.getcwd().lstrip("/") + "/PROT", dir_fd=r))
EOF
`
	out := runSession(t, root, script)
	if strings.Contains(out, "nouserns") || strings.Contains(out, "noopentree") {
		t.Skip("no user namespace or open_tree here:", out)
	}
	for _, want := range []string{"mkdir=Operation not permitted", "open=Operation not permitted", "openexcl=Operation not permitted", "rename=Operation not permitted", "procfd=Operation not permitted", "free=0", "fromroot=0"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "PROT")); err == nil {
		t.Errorf("PROT made where the path says, unjudged:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err != nil {
		t.Errorf("a free name was not made: %v\n%s", err, out)
	}
	log, _ := os.ReadFile(filepath.Join(staging, "log"))
	if string(log) != root+"/PROT\n" { // the tree cloned from "/" only
		t.Errorf("staged:\n%s, want %s/PROT once", log, root)
	}
}

// A watched name made in a directory whose path is longer than the kernel
// gives (PATH_MAX) is made as asked: no protected path lies that deep, and
// a path the kernel cannot give is not one that leads elsewhere.
func TestDeepNamesAreMade(t *testing.T) {
	lane.Live(t)
	root, _ := lab(t)
	judged(t, root)
	script := `
python3 - <<'EOF'
import os
d = os.open(".", os.O_RDONLY)
for i in range(40):
    n = ("d%d" % i) * 40
    os.mkdir(n, dir_fd=d)
    d = os.open(n, os.O_RDONLY, dir_fd=d)
try:
    os.close(os.open("ANC", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=d)); print("ANC=0")
except OSError as e:
    print("ANC=" + e.strerror)
EOF
`
	out := runSession(t, root, script)
	if !strings.Contains(out, "ANC=0\n") {
		t.Errorf("a watched name deep down was not made:\n%s", out)
	}
}

// linksEnv names a checkpoint store's links directory for the session
// (SetStoreLinks), with linksMax as the copy's bound.
const (
	linksEnv = "COPYUP_TEST_LINKS"
	linksMax = 4096
)

// A file over the bound whose one other name is the checkpoint store's link
// (named by its inode) is written in place: the store's name holds what was
// written, and no copy is made. Any other case is copied as before: a file
// under the bound, an open that truncates, another name outside however it
// is named, a third name, and a write through a descriptor whose root name
// is gone (its other name may be anything's).
func TestStoreLinkedBigFilesAreWrittenInPlace(t *testing.T) {
	lane.Live(t)
	root, store := lab(t)
	links := filepath.Join(store, "links")
	os.Mkdir(links, 0o700)
	big := strings.Repeat("x", 2*linksMax)
	tests := []struct {
		name, size string
		extra      string // "inode": the store's link; "other": another name outside; "both"
		script     string
		inPlace    bool // the outside names hold what was written
	}{
		{"append", big, "inode", `echo more >> nm/append.db`, true},
		{"rdwr", big, "inode", `python3 -c "import os; f=os.open('nm/rdwr.db', os.O_RDWR); os.pwrite(f, b'more', 0)"`, true},
		{"truncate-to", big, "inode", `python3 -c "import os; os.truncate('nm/truncate-to.db', 10)"`, true},
		{"small", "original\n", "inode", `echo more >> nm/small.db`, false},
		{"emptied", big, "inode", `echo more > nm/emptied.db`, false},
		{"not-its-inode", big, "other", `echo more >> nm/not-its-inode.db`, false},
		{"third-name", big, "both", `echo more >> nm/third-name.db`, false},
		{"held-after-rm", big, "both", `exec 3<nm/held-after-rm.db; rm nm/held-after-rm.db; echo more >> /proc/self/fd/3`, false},
	}
	var script strings.Builder
	outside := map[string][]string{}
	for _, tt := range tests {
		p := filepath.Join(root, "nm", tt.name+".db")
		if err := os.WriteFile(p, []byte(tt.size), 0o644); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		unix.Stat(p, &st)
		if tt.extra == "inode" || tt.extra == "both" {
			outside[tt.name] = append(outside[tt.name], filepath.Join(links, fmt.Sprint(st.Ino)))
		}
		if tt.extra == "other" || tt.extra == "both" {
			outside[tt.name] = append(outside[tt.name], filepath.Join(store, tt.name))
		}
		for _, o := range outside[tt.name] {
			if err := os.Link(p, o); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&script, "( %s ) 2>/dev/null\n", tt.script)
	}
	t.Setenv(linksEnv, links)
	runSession(t, root, script.String()+"true\n")
	for _, tt := range tests {
		var rst unix.Stat_t
		rerr := unix.Stat(filepath.Join(root, "nm", tt.name+".db"), &rst)
		for _, o := range outside[tt.name] {
			b, _ := os.ReadFile(o)
			var ost unix.Stat_t
			unix.Stat(o, &ost)
			switch {
			case tt.inPlace && (string(b) == tt.size || rerr != nil || rst.Ino != ost.Ino):
				t.Errorf("%s: not written in place: %s holds %d bytes, the root's file is another (%v)", tt.name, o, len(b), rerr)
			case !tt.inPlace && string(b) != tt.size:
				t.Errorf("%s: written through %s (%d bytes, was %d)", tt.name, o, len(b), len(tt.size))
			}
		}
	}
}
