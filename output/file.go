package output

import "os"

// CreateFile creates a new file for a command's complete output in dir, named
// and protected like a spill file (<dir>/<random-id>.<name>.log, mode 0600), for
// callers that keep all of an output themselves: the logs of background jobs.
func CreateFile(dir, name string) (*os.File, error) { return createSpill(dir, name) }
