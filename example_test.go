package shellgate_test

import (
	"context"
	"fmt"
	"os"

	"github.com/shellgate/shellgate"
)

func Example() {
	root, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(root)

	g, err := shellgate.New(shellgate.Config{Root: root})
	if err != nil {
		panic(err)
	}
	defer g.Close()

	env := g.Run(context.Background(), shellgate.Request{Command: "echo hello && exit 3"})
	fmt.Println(env.Status, *env.Data.ExitCode, env.Data.Stdout)

	env = g.Run(context.Background(), shellgate.Request{Command: "sudo id"})
	fmt.Println(env.Status, env.Error.Code)
	// Output:
	// partial 3 hello
	//
	// error POLICY_DENIED
}
