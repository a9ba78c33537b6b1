//go:build !linux

package runner

import "errors"

// Subreap: only Linux has child subreapers (see the Linux doc).
func Subreap() error { return errors.ErrUnsupported }

func forking() func(pid int) { return func(int) {} }

func waited(int) {}

func sinceTick() uint64 { return 0 }

func afterExit(launcher Launcher, _ uint64) Launcher { return launcher }
