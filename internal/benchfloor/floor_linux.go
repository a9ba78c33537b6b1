package benchfloor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func (e Exit) start(dir string) (func() error, error) {
	if e.Binds+e.Overlays > 0 && !e.NS {
		return nil, errors.New("mounts outside a mount namespace would be the host's")
	}
	var script strings.Builder
	if e.Binds+e.Overlays > 0 {
		script.WriteString("mount --make-rprivate / && ")
	}
	if e.Binds > 0 {
		fmt.Fprintf(&script, "for i in $(seq %d); do mount --bind /usr /mnt || exit 3; done && ", e.Binds)
	}
	for i := range e.Overlays {
		layer := filepath.Join(dir, fmt.Sprintf("overlay-%d", i))
		for _, d := range []string{"lower", "upper", "work", "at"} {
			if err := os.MkdirAll(filepath.Join(layer, d), 0o700); err != nil {
				return nil, err
			}
		}
		// As the helper mounts a cache: volatile, user xattrs (view_linux.go).
		fmt.Fprintf(&script, "mount -t overlay overlay -o lowerdir=%[1]s/lower,upperdir=%[1]s/upper,workdir=%[1]s/work,userxattr,volatile %[1]s/at && ", layer)
	}
	script.WriteString("echo ready && { read x || :; }") // read fails at EOF
	cmd := exec.Command("sh", "-c", script.String())
	if e.NS {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
		if e.NoNet {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("%q did not get ready: %v %s", script.String(), err, stderr.String())
	}
	return func() error {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("%q: %v %s", script.String(), err, stderr.String())
		}
		return nil
	}, nil
}
