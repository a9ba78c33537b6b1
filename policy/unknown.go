package policy

import (
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// opaqueShells run command text shellgate does not analyse.
var opaqueShells = map[string]string{
	"pwsh": "PowerShell", "powershell": "PowerShell", "pwsh.exe": "PowerShell", "powershell.exe": "PowerShell",
	"cmd": "cmd.exe", "cmd.exe": "cmd.exe",
}

// otherPrograms are everyday programs that no rule names, but whose first
// operand is data, not a command (git rm, apt show curl, man rm).
var otherPrograms = []string{
	"git", "go", "make", "gmake", "npm", "pnpm", "yarn", "npx", "bun", "deno", "cargo", "rustc", "rustup", "gcc", "g++", "cc",
	"clang", "clang++", "ld", "python", "python3", "pip", "pip3", "pipx", "uv", "poetry", "pytest", "tox", "node", "java",
	"javac", "mvn", "gradle", "dotnet", "cmake", "ctest", "cpack", "meson", "ninja", "apt", "apt-get", "apt-cache", "dpkg", "brew", "dnf", "yum", "pacman", "apk",
	"snap", "flatpak", "nix", "man", "info", "tldr", "whatis", "apropos", "whereis", "help", "hash", "alias", "unalias",
	"kubectl", "helm", "terraform", "aws", "gcloud", "az", "gh", "glab", "systemctl", "journalctl", "service",
	"update-alternatives", "complete", "compgen", "bind", "tput", "stty", "tmux", "xdg-open", "open", "code",
	"shellcheck", "shfmt", "prettier", "eslint", "black", "ruff", "mypy", "jest", "vitest", "tsc", "gofmt", "golangci-lint",
	"staticcheck", "docker-compose", "podman-compose", "vagrant", "ansible", "ansible-playbook", "rg", "fd", "ag", "ack",
	"bat", "less", "more", "fzf", "jq", "yq", "gzip", "bzip2", "xz", "zstd", "unzip", "zip", "tar", "ssh-keygen", "gpg",
	"openssl", "kill", "pkill", "killall", "pgrep", "lsof", "strace", "ltrace", "gdb", "lldb", "valgrind", "perf",
	"trap", "unset", "shift", "return", "break", "continue", "let", "getopts", "mapfile", "readarray", "caller",
	"ulimit", "umask", "disown", "jobs", "fg", "bg", "suspend", "logout", "dirs", "history", "fc", "enable",
}

// taskWords are program names that are also the everyday subcommands of task
// runners (just test, bazel run, task install).
var taskWords = map[string]bool{
	"test": true, "install": true, "help": true, "time": true, "watch": true, "diff": true, "sort": true,
	"find": true, "kill": true, "run": true, "start": true, "stop": true, "build": true, "clean": true, "check": true,
	"list": true, "show": true, "update": true, "status": true, "info": true, "version": true, "init": true,
	"add": true, "remove": true, "format": true, "fmt": true, "lint": true, "deploy": true, "exec": true,
	"link": true, "touch": true, "open": true, "top": true, "which": true, "type": true, "env": true, "set": true,
}

// known reports whether a rule or a list of shellgate's names the program.
// It asks each list in turn rather than a union built on first use: a
// one-shot check or hook asks about a handful of names, and building the
// union cost more (~0.07 ms per process) than all their lookups.
func known(name string) bool {
	return has(readOnly, name) || has(privileged, name) || has(interpreters, name) || has(networkClients, name) ||
		has(diskTools, name) || has(powerTools, name) || has(escapeTools, name) || has(gitReadOnly, name) ||
		has(writers, name) || has(interactiveTools, name) || has(repls, name) || slices.Contains(otherPrograms, name) ||
		analysis.KnownProgram(name) || strings.HasPrefix(name, "python") || strings.HasPrefix(name, "mkfs")
}

// has reports whether m has key k, whatever its value.
func has[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// unknownRunner asks about a program shellgate does not know whose
// arguments look like a command line: a program name, then its arguments
// (parallel rm -rf ::: ~, firejail rm -rf ~). Such a program may run them.
// PowerShell and cmd.exe text is never analysed: it asks.
func (x *check) unknownRunner(c *analysis.Command) {
	if sh := opaqueShells[c.Name]; sh != "" {
		if !infoOnly(c) {
			x.ask(RuleDynamic, "`%s` runs %s commands, which shellgate does not analyse (rule dynamic): the user must approve it.", c.Source, sh)
		}
		return
	}
	// A program run by its path is the project's own: what it does is not
	// in its arguments.
	if known(c.Name) || strings.Contains(c.Path, "/") || len(c.Operands) < 2 {
		return
	}
	i := c.Operands[0]
	if c.Flags[i]&analysis.ArgDynamic != 0 {
		return
	}
	first := c.Args[i]
	if strings.Contains(first, "/") || !known(first) || taskWords[first] {
		return
	}
	x.ask(RuleExecFlags, "`%s`: %s is not a program shellgate knows, and its arguments look like a command line (`%s …`) that it may run (rule code-execution): the user must approve it. Run the inner command directly.", c.Source, c.Name, first)
}
