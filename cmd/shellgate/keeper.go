package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/keeper"
)

// keeperCommand is the subcommand a one-shot run starts the root's checkpoint
// keeper with (hidden: not in the usage; docs/checkpoints.md).
const keeperCommand = "checkpoint-keeper"

// withKeeper lets cfg's one-shot run ask the root's checkpoint keeper for its
// checkpoints, starting one (this executable) when none runs.
func withKeeper(cfg *shellgate.Config) {
	if exe, err := os.Executable(); err == nil {
		cfg.Checkpoints.Keeper = []string{exe, keeperCommand}
	}
}

// cmdKeeper serves as the keeper of one root's checkpoints until it should
// end; its one argument is the JSON keeper.Args the run that started it gave.
func cmdKeeper(args []string, stdout, stderr io.Writer) int {
	var a keeper.Args
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &a) != nil {
		fmt.Fprintf(stderr, "shellgate %s: started by shellgate itself, with one JSON argument\n", keeperCommand)
		return exitUsage
	}
	if err := keeper.Serve(a); err != nil {
		fmt.Fprintf(stderr, "shellgate %s: %v\n", keeperCommand, err)
		return 1
	}
	return 0
}
