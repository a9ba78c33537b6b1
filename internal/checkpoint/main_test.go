package checkpoint_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/internal/keeper"
)

// keeperEnv makes this test binary a checkpoint keeper (the warm-keeper
// benchmark): its value is the keeper's JSON arguments.
const keeperEnv = "SHELLGATE_BENCH_KEEPER"

func TestMain(m *testing.M) {
	if a := os.Getenv(keeperEnv); a != "" {
		var args keeper.Args
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		if err := keeper.Serve(args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
