package shellgate

import "fmt"

// Limits on what a caller gives, checked before anything acts on it: a request
// over one is refused with INVALID_PARAM (and the oversized value is not echoed
// whole), rather than run and then too big to report — an MCP result echoing a
// 1 MiB description does not fit in one message.
const (
	// MaxDescription bounds Request.Description, a few words for the user and the log.
	MaxDescription = 4 << 10
	// MaxDirectory bounds Request.Directory (PATH_MAX on Linux).
	MaxDirectory = 4 << 10
	// MaxPattern bounds JobRead.Filter and JobRead.Until.
	MaxPattern = 4 << 10
	// MaxInputText bounds JobInput.Text; a longer text belongs in a file.
	MaxInputText = 64 << 10
	// MaxInputKeys bounds the number of JobInput.Keys.
	MaxInputKeys = 256
)

// tooLong returns the INVALID_PARAM message for string parameter name of n
// bytes when that is over max, or "".
func tooLong(name string, n, max int, advice string) string {
	if n <= max {
		return ""
	}
	return fmt.Sprintf("Parameter '%s' is %d bytes; at most %d are accepted. %s", name, n, max, advice)
}

// requestTooLong checks the sizes of req's fields other than the command (whose
// limit is the shell's).
func requestTooLong(req Request) string {
	if msg := tooLong("description", len(req.Description), MaxDescription, "Describe the command in a few words."); msg != "" {
		return msg
	}
	return tooLong("directory", len(req.Directory), MaxDirectory, "Give a directory relative to the project root.")
}
