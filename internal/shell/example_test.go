package shell_test

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/shellgate/shellgate/internal/shell"
)

func Example() {
	sh, err := shell.Detect("bash")
	if err != nil {
		fmt.Println(err)
		return
	}
	argv := sh.Argv(`echo "$SHELLGATE ${OPENAI_API_KEY:-stripped} $MYCODEAGENT"`)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = shell.Env(append(os.Environ(), "OPENAI_API_KEY=sk-123"), shell.EnvOptions{
		Extra: map[string]string{"MYCODEAGENT": "1"},
	})
	out, _ := cmd.Output()
	fmt.Print(string(out))
	// Output: 1 stripped 1
}

func ExampleIsSecret() {
	for _, name := range []string{"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "KEYBOARD_LAYOUT", "SSH_AUTH_SOCK"} {
		fmt.Println(name, shell.IsSecret(name))
	}
	// Output:
	// GITHUB_TOKEN true
	// AWS_SECRET_ACCESS_KEY true
	// KEYBOARD_LAYOUT false
	// SSH_AUTH_SOCK false
}
