package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// nested runs the floor's "nested" (the program again, in new namespaces)
// or "nested-child" (bash in them), and reports whether arg was one.
func nested(arg string) bool {
	var cmd *exec.Cmd
	switch arg {
	case "nested":
		uid, gid := os.Getuid(), os.Getgid()
		cmd = &exec.Cmd{Path: "/proc/self/exe", Args: []string{os.Args[0], "nested-child"}, Env: []string{"GOMAXPROCS=1"}, Dir: "/",
			SysProcAttr: &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			}}
	case "nested-child":
		cmd = exec.Command("/bin/bash", "--noprofile", "--norc", "-c", "echo hi")
	default:
		return false
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, arg+":", err)
		os.Exit(1)
	}
	return true
}
