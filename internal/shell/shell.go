// Package shell chooses the shell program that runs a command, builds its argument
// vector, and builds the environment the command sees.
//
// Nothing here starts a process; package runner does that with the argv and
// environment built here.
package shell

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
)

// Kind is the family of a shell program, which decides how a script is passed to it.
type Kind string

const (
	Bash       Kind = "bash"
	Sh         Kind = "sh" // any POSIX-like shell: sh, dash, zsh, ksh, ash, or an unknown one
	PowerShell Kind = "powershell"
	Cmd        Kind = "cmd"
)

// Shell is a shell program and its kind.
type Shell struct {
	Path string
	Kind Kind
}

// Argv returns the full argument vector, program included, that makes the shell run
// script non-interactively without reading any startup file.
func (s Shell) Argv(script string) []string {
	switch s.Kind {
	case Bash:
		return []string{s.Path, "--noprofile", "--norc", "-c", script}
	case PowerShell:
		return []string{s.Path, "-NoProfile", "-NonInteractive", "-EncodedCommand", encodePowerShell(script)}
	case Cmd:
		// /d skips AutoRun registry commands; /s makes cmd strip exactly the outer
		// quotes the runner puts around the script.
		return []string{s.Path, "/d", "/s", "/c", script}
	default:
		return []string{s.Path, "-c", script}
	}
}

// encodePowerShell encodes script for -EncodedCommand: base64 of its UTF-16LE bytes.
// This sidesteps every quoting rule of the Windows command line.
func encodePowerShell(script string) string {
	units := utf16.Encode([]rune(script))
	b := make([]byte, 2*len(units))
	for i, u := range units {
		b[2*i] = byte(u)
		b[2*i+1] = byte(u >> 8)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// KindOf tells the kind of a shell from its program name or path, e.g. "/bin/bash",
// "zsh" or `C:\Windows\System32\cmd.exe`. Unknown names are treated as sh-like.
func KindOf(program string) Kind {
	// Accept both separators whatever the host, so Windows paths classify on Unix too.
	name := program[strings.LastIndexAny(program, `/\`)+1:]
	name = strings.ToLower(name)
	name = strings.TrimSuffix(name, ".exe")
	switch {
	case name == "bash" || strings.HasPrefix(name, "bash-"):
		return Bash
	case name == "pwsh" || name == "powershell" || strings.HasPrefix(name, "pwsh-"):
		return PowerShell
	case name == "cmd":
		return Cmd
	default:
		return Sh
	}
}

// MaxScript is the longest script, in bytes, that fits in the shell's command line:
// Linux takes at most 128 KiB in one argument; Windows at most 32767 UTF-16 units in
// a whole command line, which -EncodedCommand's base64 of UTF-16 inflates 8/3 times,
// and cmd.exe 8191 characters. Longer scripts belong in a file.
func (s Shell) MaxScript() int {
	switch s.Kind {
	case PowerShell:
		return 12000
	case Cmd:
		return 8000
	}
	return 128<<10 - 1
}
