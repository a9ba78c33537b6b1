// Package protect is the one table of paths in a project that run code later,
// outside any check: git's hooks and config, editors' and agents' settings,
// hook runners' and package managers' configuration, CI definitions, direnv.
// The policy asks before a command writes one (package policy), the Linux
// sandbox keeps those at the root read-only and quarantines those that appear
// (package sandbox), those below the root are kept read-only or reported when
// they appear (package repowatch), and the macOS profile denies writes to
// them. Beside it, the table of the home's secrets (Secrets), which the
// sandbox shows empty and the policy guards where no sandbox does.
package protect

import (
	"path"
	"strings"
	"sync"
)

// QuarantineDir is the directory at the project root where the sandbox moves
// the protected paths commands make. Checkpoints leave it out, so undo
// neither deletes what it holds nor brings back what the user cleared.
const QuarantineDir = ".shellgate-quarantine"

// QuarantinedPrefix begins the name of a protected path the sandbox moved
// aside beside itself, where it could not go into QuarantineDir (in a
// directory that is a mount point, such as .git): no tool reads such a
// name. Checkpoints leave these out too.
const QuarantinedPrefix = ".shellgate-quarantined-"

// An Entry is one protected path, relative to the project root.
type Entry struct {
	// Path is a name or a slash-separated path ("…/" for a directory and
	// all it holds), or a pattern of one name ("*.code-workspace").
	Path string
	// RootOnly: protected at the root alone. The others are protected at
	// any depth too: tools look for their settings from the directory they
	// run in upwards (npm, cargo, rustup, direnv, mise), and editors and
	// agents are opened on subprojects. What only a repository's top obeys
	// (git's own files, CI) is root-only; a nested repository's are
	// watched as a repository.
	RootOnly bool
	// PolicyOnly: the policy asks before a write, the kernel leaves it
	// writable (git itself writes all of .git).
	PolicyOnly bool
	// InPlace: git creates it (init, clone, submodule). At the root it is
	// quarantined like the rest when it appears (git works without it); in a
	// subdirectory it comes with a repository, which is reported whole.
	InPlace bool
	// Harmless says whether content is what the tools read as data alone
	// (a version, not a path to run): such an entry a command makes is
	// kept where it is, judged on a copy no command writes any more,
	// rather than quarantined. Nil: none is.
	Harmless func(data []byte) bool
	Why      string
}

// Table is every protected path. Each entry's Why says what runs it; the
// table test checks examples of each.
var Table = []Entry{
	{Path: ".git/", RootOnly: true, PolicyOnly: true, Why: "git runs what its hooks, config and attributes say"},
	{Path: ".git/hooks/", RootOnly: true, InPlace: true, Why: "git runs hooks at commit, checkout, merge"},
	{Path: ".git/config", RootOnly: true, InPlace: true, Why: "fsmonitor, pager, editor, aliases, filters run programs"},
	{Path: ".git/config.worktree", RootOnly: true, Why: "as .git/config"},
	{Path: ".git/commondir", RootOnly: true, Why: "moves git's config elsewhere"},
	{Path: ".git/info/", RootOnly: true, InPlace: true, Why: "attributes name filters; exclude hides files from git status"},
	{Path: ".gitattributes", InPlace: true, Why: "names filter and diff drivers git runs"},
	{Path: ".gitmodules", InPlace: true, Why: "submodule commands and update programs"},
	{Path: ".githooks/", RootOnly: true, Why: "the usual core.hooksPath"},
	// git takes a directory for a repository by its HEAD (with objects/ and
	// refs/ beside it): the root itself, where it has no .git or one that is
	// no repository (a HEAD that names no ref), whose config git then obeys.
	{Path: "HEAD", RootOnly: true, Why: "makes the root itself a repository, whose config git obeys"},
	// Editors and agents: tasks, hooks and MCP servers they start on their own.
	{Path: ".vscode/", Why: "tasks run on folder open, settings name programs"},
	{Path: "*.code-workspace", Why: "workspace tasks and settings"},
	{Path: ".idea/", Why: "run configurations, startup tasks"},
	{Path: ".zed/", Why: "tasks and language servers"},
	{Path: ".theia/", Why: "Theia IDE tasks (run on folder open) and settings, as .vscode"},
	{Path: ".helix/", Why: "language servers and formatters Helix starts"},
	{Path: ".devcontainer/", Why: "postCreate and postStart commands"},
	{Path: ".devcontainer.json", Why: "postCreate and postStart commands"},
	{Path: ".claude/", Why: "Claude Code hooks and MCP servers"},
	{Path: ".mcp.json", Why: "MCP servers clients start"},
	{Path: ".gemini/", Why: "Gemini CLI hooks and MCP servers"},
	{Path: ".codex/", Why: "Codex MCP servers and profiles"},
	{Path: ".cursor/", Why: "Cursor hooks and MCP servers"},
	{Path: ".opencode/", Why: "opencode plugins and MCP servers"},
	{Path: "opencode.json", Why: "opencode MCP servers"},
	{Path: "opencode.jsonc", Why: "opencode MCP servers"},
	{Path: ".continue/", Why: "Continue MCP servers"},
	{Path: ".factory/", Why: "Factory Droid hooks and MCP servers"},
	{Path: ".augment/", Why: "Augment (Auggie) hooks"},
	{Path: ".tabnine/", Why: "Tabnine CLI hooks (.tabnine/agent/settings.json)"},
	{Path: ".openhands/", Why: "OpenHands' setup.sh, run as each session starts, and hooks"},
	{Path: ".qwen/", Why: "Qwen Code hooks and MCP servers"},
	{Path: ".amazonq/", Why: "Amazon Q MCP servers"},
	{Path: ".kiro/", Why: "Kiro hooks and MCP servers"},
	{Path: ".roo/", Why: "Roo Code MCP servers"},
	{Path: ".windsurf/", Why: "Windsurf workflows and MCP servers"},
	{Path: "crush.json", Why: "Crush MCP servers and language servers"},
	{Path: ".crush.json", Why: "Crush MCP servers and language servers"},
	{Path: ".aider.conf.yml", Why: "commands aider runs (lint, test)"},
	{Path: ".kilocode/", Why: "Kilo Code MCP servers"},
	{Path: ".clinerules/", Why: "Cline hooks"},
	{Path: ".junie/", Why: "Junie MCP servers"},
	{Path: ".amp/", Why: "Amp's workspace settings: tool permissions and MCP servers, merged with the user's"},
	{Path: ".trae/", Why: "Trae's project MCP servers (.trae/mcp.json)"},
	{Path: ".idx/", Why: "the onStart commands a Firebase Studio (IDX) workspace runs"},
	{Path: ".shellgate.toml", Why: "shellgate's own project settings"},
	// Hook runners: what a protected hook runs.
	{Path: ".husky/", RootOnly: true, Why: "git hooks husky installs"},
	{Path: ".pre-commit-config.yaml", RootOnly: true, Why: "pre-commit hooks"},
	{Path: "lefthook.*", Why: "lefthook hooks (yml, yaml, toml, json)"},
	{Path: ".lefthook.*", Why: "lefthook hooks"},
	{Path: "lefthook-local.*", Why: "lefthook hooks"},
	{Path: ".lefthook-local.*", Why: "lefthook hooks"},
	{Path: ".lefthook/", Why: "lefthook scripts"},
	{Path: ".lintstagedrc", Why: "commands lint-staged runs at commit"},
	{Path: ".lintstagedrc.*", Why: "commands lint-staged runs at commit"},
	{Path: "lint-staged.config.*", Why: "commands lint-staged runs at commit"},
	{Path: ".simple-git-hooks.json", RootOnly: true, Why: "git hooks"},
	// CI: what the project's pipelines run, with its secrets.
	{Path: ".github", RootOnly: true, PolicyOnly: true, Why: "renaming it moves the workflows"},
	{Path: ".github/workflows/", RootOnly: true, Why: "CI workflows"},
	{Path: ".github/actions/", RootOnly: true, Why: "local actions workflows use"},
	{Path: ".github/hooks/", RootOnly: true, Why: "Copilot CLI and coding agent hooks"},
	{Path: ".gitlab-ci.yml", RootOnly: true, Why: "CI pipeline"},
	{Path: ".gitlab/", RootOnly: true, Why: "CI includes"},
	{Path: ".circleci/", RootOnly: true, Why: "CI pipeline"},
	{Path: ".buildkite/", RootOnly: true, Why: "CI pipeline"},
	{Path: "azure-pipelines.yml", RootOnly: true, Why: "CI pipeline"},
	{Path: "bitbucket-pipelines.yml", RootOnly: true, Why: "CI pipeline"},
	{Path: ".travis.yml", RootOnly: true, Why: "CI pipeline"},
	{Path: ".gitpod.yml", RootOnly: true, Why: "tasks a Gitpod workspace runs at start"},
	// Other version control systems' hooks and settings, as git's.
	{Path: ".hg/hgrc", RootOnly: true, Why: "Mercurial hooks and extensions"},
	{Path: ".jj/repo/config.toml", RootOnly: true, Why: "Jujutsu's settings (fsmonitor, signing programs)"},
	// Environments and package managers: what later commands obey.
	{Path: ".envrc", Why: "direnv runs it on cd"},
	{Path: ".npmrc", Why: "registries and scripts npm obeys"},
	{Path: ".yarnrc", Why: "yarn settings"},
	{Path: ".yarnrc.yml", Why: "yarnPath and plugins yarn runs"},
	{Path: ".yarn/releases/", Why: "the yarn yarnPath runs"},
	{Path: ".yarn/plugins/", Why: "yarn plugins"},
	{Path: ".pnpmfile.cjs", Why: "hooks pnpm runs at install"},
	{Path: "pnpm-workspace.yaml", Why: "pnpm settings (scriptShell, pnpmfile), as .npmrc's"},
	{Path: "devbox.json", Why: "the init hook devbox shell runs"},
	{Path: ".pdm-python", Why: "the interpreter pdm runs"},
	{Path: ".python-version", Harmless: PythonVersions, Why: "the interpreter uv runs: a line that is no version names one by path (.venv/x/python, or a bare name that is a file or directory where uv runs)"},
	{Path: "bunfig.toml", Why: "bun preload scripts"},
	{Path: ".pypirc", Why: "upload credentials and targets"},
	{Path: "pip.conf", Why: "index pip installs from"},
	{Path: "pip.ini", Why: "index pip installs from"},
	{Path: "uv.toml", Why: "index uv installs from"},
	{Path: ".cargo/", Why: "cargo aliases, runners, rustc wrappers"},
	{Path: "rust-toolchain", Why: "the toolchain rustup runs"},
	{Path: "rust-toolchain.toml", Why: "the toolchain rustup runs"},
	{Path: ".bazelrc", Why: "bazel startup options"},
	{Path: ".bazeliskrc", Why: "where bazelisk downloads the bazel it runs"},
	{Path: ".bazelversion", Why: "the bazel bazelisk downloads and runs: a <FORK>/<VERSION> line is github.com/<FORK>/bazel's release"},
	{Path: "tools/bazel", Why: "bazelisk runs the workspace's tools/bazel in place of bazel"},
	{Path: ".tool-versions", Why: "toolchains asdf and mise run"},
	{Path: ".mise.toml", Why: "mise tasks and hooks"},
	{Path: "mise.toml", Why: "mise tasks and hooks"},
	// mise reads every name below as the same settings (hooks, env._.source):
	// local and per-environment files, and the directory forms.
	{Path: "mise.*.toml", Why: "mise hooks (mise.local.toml, mise.<env>.toml)"},
	{Path: ".mise.*.toml", Why: "mise hooks"},
	{Path: ".mise/", Why: "mise settings (.mise/config.toml) and hooks"},
	{Path: "mise/config.toml", Why: "mise hooks"},
	{Path: "mise/config.local.toml", Why: "mise hooks"},
	{Path: ".pip/", Why: "pip settings"},
	{Path: ".config/", Why: "tools' settings in the project"},
	{Path: ".bundle/", Why: "bundler settings"},
	{Path: ".mvn/", Why: "JVM options (a -javaagent) and the wrapper maven runs"},
	{Path: "gradle.properties", Why: "JVM options the gradle daemon starts with"},
	{Path: ".jvmopts", Why: "JVM options sbt starts with (a -javaagent)"},
	{Path: ".sbtopts", Why: "options sbt starts with"},
	{Path: "gradle/wrapper/", Why: "the gradle distribution the wrapper downloads and runs"},
	// Debuggers and REPLs that run a file of the directory they start in.
	{Path: ".pdbrc", Why: "pdb runs it (pytest --pdb, breakpoint())"},
	{Path: ".perldb", Why: "perl -d runs it"},
	{Path: ".irbrc", Why: "irb runs it (rails console)"},
	{Path: "_irbrc", Why: "irb runs it"},
	{Path: "irb.rc", Why: "irb runs it"},
	{Path: "$irbrc", Why: "irb runs it"},
	{Path: ".pryrc", Why: "pry runs it"},
	{Path: ".Rprofile", Why: "R and Rscript run it"},
	{Path: ".Renviron", Why: "R reads it (R_PROFILE_USER, R_LIBS_USER)"},
	{Path: ".ghci", Why: "ghci runs it"},
	{Path: ".octaverc", Why: "octave runs it"},
}

// Match reports whether rel, a clean slash-separated path relative to the
// root, is a protected path or lies in one. policyOnly entries count. Names
// are compared folded (Fold): .VSCODE/tasks.json is .vscode/tasks.json.
func Match(rel string) bool {
	_, ok := Lookup(rel)
	return ok
}

// Lookup returns the entry that protects rel.
func Lookup(rel string) (Entry, bool) { return lookup(rel, false) }

// Guarded reports whether an entry the kernel keeps read-only (not the
// policy's alone) protects rel.
func Guarded(rel string) bool {
	_, ok := lookup(rel, true)
	return ok
}

func lookup(rel string, guardedOnly bool) (Entry, bool) {
	if strings.Contains(rel, "..") || strings.Contains(rel, "//") || strings.HasPrefix(rel, "./") || strings.Contains(rel, "/./") {
		rel = path.Clean("/" + rel)
	}
	rel = Fold(strings.Trim(rel, "/"))
	if rel == "" || rel == "." {
		return Entry{}, false
	}
	idx := index()
	// Each component may start an entry: the first any entry, the others a
	// nested one.
	for rest, first := rel, true; rest != ""; first = false {
		comp, _, _ := strings.Cut(rest, "/")
		for _, list := range [2][]int{idx.byFirst[comp], idx.patterns} {
			for _, i := range list {
				if e := Table[i]; (first || !e.RootOnly) && !(guardedOnly && e.PolicyOnly) && idx.folded[i].matches(rest) {
					return e, true
				}
			}
		}
		_, rest, _ = strings.Cut(rest, "/")
	}
	return Entry{}, false
}

// tableIndex finds the entries a path's component may start: the policy
// asks about every path a command names, so a lookup must not try them all.
type tableIndex struct {
	byFirst  map[string][]int // an entry's first component, literal and folded → entries
	patterns []int            // entries whose first component is a pattern
	folded   []Entry          // Table, each Path folded: what a folded path is matched against
}

var index = sync.OnceValue(func() tableIndex {
	idx := tableIndex{byFirst: map[string][]int{}}
	for i, e := range Table {
		e.Path = Fold(e.Path)
		idx.folded = append(idx.folded, e)
		first, _, _ := strings.Cut(e.Path, "/")
		if strings.ContainsAny(first, "*?[") {
			idx.patterns = append(idx.patterns, i)
		} else {
			idx.byFirst[first] = append(idx.byFirst[first], i)
		}
	}
	return idx
})

// matches reports whether rel (from where the entry may sit) is the entry or
// lies in it.
func (e Entry) matches(rel string) bool {
	want := strings.TrimSuffix(e.Path, "/")
	dir := len(want) < len(e.Path)
	for want != "" {
		if rel == "" {
			return false
		}
		w, wrest, _ := strings.Cut(want, "/")
		c, crest, _ := strings.Cut(rel, "/")
		if w != c {
			if ok, _ := path.Match(w, c); !ok {
				return false
			}
		}
		want, rel = wrest, crest
	}
	return rel == "" || dir
}

// RootPaths are the entries the kernel keeps read-only at the root: every
// one but the policy's alone and the patterns, without the trailing slash.
func RootPaths() []string {
	var ps []string
	for _, e := range Table {
		if !e.PolicyOnly && !strings.ContainsAny(e.Path, "*?[") {
			ps = append(ps, strings.TrimSuffix(e.Path, "/"))
		}
	}
	return ps
}

// RootPatterns are the entries that name a pattern of one name, protected at
// the root by the kernel too: it matches them against the root's entries.
func RootPatterns() []string {
	var ps []string
	for _, e := range Table {
		if !e.PolicyOnly && strings.ContainsAny(e.Path, "*?[") && !strings.Contains(e.Path, "/") {
			ps = append(ps, e.Path)
		}
	}
	return ps
}

// Names are the names (folded) of every component of every entry, literal
// or a pattern: a name that matches none of them begins no protected path
// and lies in none where it stands, wherever it stands.
var Names = sync.OnceValue(func() []string {
	seen := map[string]bool{}
	var ns []string
	for _, e := range index().folded {
		for _, n := range strings.Split(strings.TrimSuffix(e.Path, "/"), "/") {
			if !seen[n] {
				seen[n] = true
				ns = append(ns, n)
			}
		}
	}
	return ns
})
