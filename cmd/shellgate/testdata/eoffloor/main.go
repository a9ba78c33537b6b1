// Command eoffloor is the floor under `shellgate mcp`'s exit on stdin EOF
// after a sandboxed call (BenchmarkMCPStdinEOF): a Go program that holds,
// as a child, a shell with what the sandbox's helper holds
// (benchfloor.Helper: its namespaces, mounts and the caches' overlays), and
// at EOF ends it, waits until it is reaped and exits. It prints "ready"
// once the child is up. With -plain it holds no child: a Go program that
// only exits.
//
//	eoffloor -plain | LAYERS-DIR
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/shellgate/shellgate/internal/benchfloor"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "-plain":
		err = run("")
	case len(os.Args) == 2:
		err = run(os.Args[1])
	default:
		err = errors.New("usage: eoffloor -plain | LAYERS-DIR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eoffloor:", err)
		os.Exit(1)
	}
}

// run holds the child with its layers under dir ("": none) until EOF. The
// layers are left for the caller to remove, as the helper leaves the
// caches' layers for the next session.
func run(dir string) error {
	stop := func() error { return nil }
	if dir != "" {
		var err error
		if stop, err = benchfloor.Helper.Start(dir); err != nil {
			return err
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	return stop()
}
