//go:build !windows

package main

import "golang.org/x/sys/unix"

func signalNumber(name string) int { return int(unix.SignalNum(name)) }
