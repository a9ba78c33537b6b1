//go:build !linux

package runner

import "errors"

// Subreap: only Linux has child subreapers (see the Linux doc).
func Subreap() error { return errors.ErrUnsupported }

func forking() func(pid int) { return func(int) {} }

func waited(int) {}

func beforeLaunch(launcher Launcher) Launcher { return launcher }
