//go:build !linux

package main

import (
	"fmt"
	"os"
)

// nested: no namespaces here, so no nested floor (BenchmarkCLI leaves it out).
func nested(arg string) bool {
	if arg != "nested" && arg != "nested-child" {
		return false
	}
	fmt.Fprintln(os.Stderr, "no namespaces here")
	os.Exit(2)
	return true
}
