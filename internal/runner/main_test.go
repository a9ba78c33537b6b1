package runner

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if subreaping() {
		if err := Subreap(); err != nil {
			panic(err)
		}
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/shellgate/shellgate/internal/runner.reaper"))
}

// subreapEnv set to 1 runs this test binary as a child subreaper
// (TestSubreap's child); set to "late", as a process that becomes one only
// after a command ran (TestSubreapLate's child).
const subreapEnv = "SHELLGATE_TEST_SUBREAP"

func subreaping() bool { return os.Getenv(subreapEnv) == "1" }
