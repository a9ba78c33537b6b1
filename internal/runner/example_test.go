//go:build unix

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/shell"
)

func Example() {
	sh, err := shell.Detect("")
	if err != nil {
		fmt.Println(err)
		return
	}
	sup := runner.NewSupervisor()
	defer sup.Close() // ends anything the commands left running

	var stdout, stderr bytes.Buffer
	res, err := sup.Run(context.Background(), runner.Spec{
		Argv:    sh.Argv(`echo hello; echo oops >&2; exit 3`),
		Stdout:  &stdout,
		Stderr:  &stderr,
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println("not started:", err)
		return
	}
	fmt.Printf("exit %d, stdout %q, stderr %q\n", *res.ExitCode, stdout.String(), stderr.String())
	// Output: exit 3, stdout "hello\n", stderr "oops\n"
}

// A timeout kills the whole process group and keeps what was printed before.
func Example_timeout() {
	sup := runner.NewSupervisor()
	defer sup.Close()
	var stdout bytes.Buffer
	res, _ := sup.Run(context.Background(), runner.Spec{
		Argv:    []string{"sh", "-c", "echo working; sleep 60 & sleep 60"},
		Stdout:  &stdout,
		Timeout: 100 * time.Millisecond,
	})
	fmt.Println(res.TimedOut, res.Signal, res.ExitCode == nil, stdout.String())
	// Output: true SIGTERM true working
}

// A background process does not hold Run up; it keeps running until Close.
func Example_background() {
	sup := runner.NewSupervisor()
	defer sup.Close()
	var stdout bytes.Buffer
	res, _ := sup.Run(context.Background(), runner.Spec{
		Argv:   []string{"sh", "-c", "sleep 300 & echo started"},
		Stdout: &stdout,
	})
	fmt.Print(stdout.String(), len(res.BackgroundPIDs), " background process\n")
	// Output:
	// started
	// 1 background process
}
