package output_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/shellgate/shellgate/internal/output"
)

// A command's stdout is copied into a Capture; within the limit the Text is exactly
// what the command printed and nothing touches the disk.
func Example() {
	c := output.New(output.Options{Name: "stdout"})
	fmt.Fprintln(c, "hello from the command")
	r := c.Close()
	fmt.Printf("%q truncated=%v spilled=%v\n", r.Text, r.Truncated, r.SpillPath != "")
	// Output: "hello from the command\n" truncated=false spilled=false
}

// Past the limit, the Text keeps the head and the tail at line boundaries, and the
// complete output is in a spill file named in the marker line.
func Example_truncated() {
	dir, _ := os.MkdirTemp("", "spill")
	defer os.RemoveAll(dir)

	c := output.New(output.Options{Limit: 80, SpillDir: dir, Name: "stdout"})
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(c, "test %03d ok\n", i)
	}
	r := c.Close()
	full, _ := os.ReadFile(r.SpillPath)
	fmt.Print(strings.ReplaceAll(r.Text, r.SpillPath, "<spill file>"))
	fmt.Println(r.Total, r.Truncated, len(full))
	// Output:
	// test 001 ok
	// test 002 ok
	// test 003 ok
	// ... [1128 bytes omitted; full output: <spill file>] ...
	// test 098 ok
	// test 099 ok
	// test 100 ok
	// 1200 true 1200
}

// Binary output is never shown as text; it is always kept in a spill file.
func Example_binary() {
	dir, _ := os.MkdirTemp("", "spill")
	defer os.RemoveAll(dir)

	c := output.New(output.Options{SpillDir: dir, Name: "stdout"})
	c.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	r := c.Close()
	fmt.Printf("binary=%v text=%q spilled=%v\n", r.Binary, r.Text, r.SpillPath != "")
	// Output: binary=true text="" spilled=true
}
