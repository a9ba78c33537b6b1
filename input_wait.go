package shellgate

import "os"

// waitingForInput reports whether the process group pgid is blocked reading in.
var waitingForInput = func(pgid int, in *os.File) bool { return false }
