//go:build unix

// Package ordertest checks, for tests, that a command's stdout and stderr,
// given as two pipes, reach a reader of both in the order the command wrote
// them: as an agent that joins its two sockets as data comes sees them.
package ordertest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Script writes "err N" to stderr, then "out N" to stdout, for N from 0 to
// Lines-1 (bash).
const Script = `for i in $(seq 0 199); do echo "err $i" >&2; echo "out $i"; done`

// Lines is how many lines Script writes to each stream.
const Lines = 200

// Check reads stdout to EOF and, after each read, whatever stderr holds
// now, without waiting: each "out N" must find "err N" already read or
// waiting in stderr, since the command wrote it first. A relay that copies
// each stream on its own can be behind on stderr when stdout arrives. It
// then reads stderr to EOF and wants Lines of each.
func Check(stdout, stderr *os.File) error {
	var errs strings.Builder
	drain := func() error {
		raw, err := stderr.SyscallConn()
		if err != nil {
			return err
		}
		buf := make([]byte, 64<<10)
		for {
			var n int
			var rerr error
			if err := raw.Read(func(fd uintptr) bool {
				n, rerr = syscall.Read(int(fd), buf)
				return true // never wait: what is there now
			}); err != nil {
				return err
			}
			if n <= 0 || rerr != nil {
				if rerr != nil && !errors.Is(rerr, syscall.EAGAIN) {
					return rerr
				}
				return nil
			}
			errs.Write(buf[:n])
		}
	}
	r := bufio.NewReader(stdout)
	n := 0
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			if err := drain(); err != nil {
				return fmt.Errorf("reading stderr: %v", err)
			}
			if line != fmt.Sprintf("out %d\n", n) {
				return fmt.Errorf("stdout line %d: %q", n, line)
			}
			if !strings.Contains(errs.String(), fmt.Sprintf("err %d\n", n)) {
				return fmt.Errorf("%q arrived before %q, which the command wrote first (stderr so far ends %q)", line, fmt.Sprintf("err %d\n", n), tail(errs.String()))
			}
			n++
		}
		if err != nil {
			break
		}
	}
	rest := bufio.NewReader(stderr)
	for {
		b, err := rest.ReadString('\n')
		errs.WriteString(b)
		if err != nil {
			break
		}
	}
	if n != Lines || strings.Count(errs.String(), "\n") != Lines {
		return fmt.Errorf("%d lines on stdout and %d on stderr, want %d of each", n, strings.Count(errs.String(), "\n"), Lines)
	}
	return nil
}

func tail(s string) string { return s[max(0, len(s)-20):] }
