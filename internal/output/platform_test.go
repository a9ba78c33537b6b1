package output

import "runtime"

const isWindows = runtime.GOOS == "windows"
