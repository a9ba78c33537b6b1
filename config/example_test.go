package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/shellgate/shellgate/config"
)

func ExampleLoad() {
	root, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(root)
	// The repository's own file: it may add deny and ask rules, but its allow is ignored
	// unless the user trusts project files.
	os.WriteFile(filepath.Join(root, ".shellgate.toml"), []byte(`
[limits]
default_timeout = "90s"

[policy]
deny = ["git push --force *"]
allow = ["curl *"]
`), 0o644)

	cfg, src, err := config.Load(config.LoadOptions{Root: root, NoUserConfig: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("timeout:", cfg.DefaultTimeout)
	fmt.Println("deny:", cfg.Policy.Deny)
	fmt.Println("allow:", cfg.Policy.Allow)
	for _, w := range src.Warnings {
		fmt.Printf("warning at line %d: %s\n", w.Line, w.Key)
	}
	// Output:
	// timeout: 1m30s
	// deny: [git push --force *]
	// allow: []
	// warning at line 7: policy.allow
}
