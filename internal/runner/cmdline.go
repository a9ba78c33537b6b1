package runner

import "strings"

// cmdExeLine builds the Windows command line for argv [cmd.exe /d /s /c script]
// as built by package shell. cmd.exe does not parse the quoting exec.Cmd applies
// to arguments; with /s it removes exactly the first and the last quote of what
// follows /c, so the script is wrapped in one pair of quotes and passed verbatim.
// ok is false for any other argv, which exec.Cmd quotes as usual.
func cmdExeLine(path string, argv []string) (line string, ok bool) {
	base := strings.ToLower(path[strings.LastIndexAny(path, `/\`)+1:])
	if base != "cmd.exe" && base != "cmd" || len(argv) != 5 ||
		argv[1] != "/d" || argv[2] != "/s" || argv[3] != "/c" {
		return "", false
	}
	quoted := path
	if strings.ContainsAny(path, " \t") {
		quoted = `"` + path + `"`
	}
	return quoted + ` /d /s /c "` + argv[4] + `"`, true
}
