//go:build !linux

package main

// v1PidsCgroup: cgroups are Linux's.
func v1PidsCgroup() (string, bool) { return "", false }
