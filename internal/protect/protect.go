// Package protect is the one table of paths in a project that run code later,
// outside any check: git's hooks and config, editors' and agents' settings,
// hook runners' and package managers' configuration, CI definitions, direnv.
// The policy asks before a command writes one (package policy), the Linux
// sandbox keeps those at the root read-only and quarantines those that appear
// (package sandbox), those below the root are kept read-only or reported when
// they appear (package repowatch), and the macOS profile denies writes to
// them.
package protect

import (
	"path"
	"strings"
	"sync"
)

// An Entry is one protected path, relative to the project root.
type Entry struct {
	// Path is a name or a slash-separated path ("…/" for a directory and
	// all it holds), or a pattern of one name ("*.code-workspace").
	Path string
	// Nested: protected at any depth too, where tools find it in a
	// subdirectory (an editor opened on a subproject, a nested repository).
	Nested bool
	// PolicyOnly: the policy asks before a write, the kernel leaves it
	// writable (git itself writes all of .git).
	PolicyOnly bool
	// InPlace: git creates it (init, clone, submodule). At the root it is
	// quarantined like the rest when it appears (git works without it); in a
	// subdirectory it comes with a repository, which is reported whole.
	InPlace bool
	Why     string
}

// Table is every protected path. Each entry's Why says what runs it; the
// table test checks examples of each.
var Table = []Entry{
	{Path: ".git/", PolicyOnly: true, Why: "git runs what its hooks, config and attributes say"},
	{Path: ".git/hooks/", InPlace: true, Why: "git runs hooks at commit, checkout, merge"},
	{Path: ".git/config", InPlace: true, Why: "fsmonitor, pager, editor, aliases, filters run programs"},
	{Path: ".git/config.worktree", Why: "as .git/config"},
	{Path: ".git/commondir", Why: "moves git's config elsewhere"},
	{Path: ".git/info/", InPlace: true, Why: "attributes name filters; exclude hides files from git status"},
	{Path: ".gitattributes", Nested: true, InPlace: true, Why: "names filter and diff drivers git runs"},
	{Path: ".gitmodules", Nested: true, InPlace: true, Why: "submodule commands and update programs"},
	{Path: ".githooks/", Why: "the usual core.hooksPath"},
	// Editors and agents: tasks, hooks and MCP servers they start on their own.
	{Path: ".vscode/", Nested: true, Why: "tasks run on folder open, settings name programs"},
	{Path: "*.code-workspace", Nested: true, Why: "workspace tasks and settings"},
	{Path: ".idea/", Nested: true, Why: "run configurations, startup tasks"},
	{Path: ".zed/", Nested: true, Why: "tasks and language servers"},
	{Path: ".devcontainer/", Why: "postCreate and postStart commands"},
	{Path: ".devcontainer.json", Why: "postCreate and postStart commands"},
	{Path: ".claude/", Nested: true, Why: "Claude Code hooks and MCP servers"},
	{Path: ".mcp.json", Nested: true, Why: "MCP servers clients start"},
	{Path: ".gemini/", Nested: true, Why: "Gemini CLI hooks and MCP servers"},
	{Path: ".codex/", Nested: true, Why: "Codex MCP servers and profiles"},
	{Path: ".cursor/", Nested: true, Why: "Cursor hooks and MCP servers"},
	{Path: ".opencode/", Nested: true, Why: "opencode plugins and MCP servers"},
	{Path: "opencode.json", Nested: true, Why: "opencode MCP servers"},
	{Path: "opencode.jsonc", Nested: true, Why: "opencode MCP servers"},
	{Path: ".continue/", Why: "Continue MCP servers"},
	{Path: ".shellgate.toml", Why: "shellgate's own project settings"},
	// Hook runners: what a protected hook runs.
	{Path: ".husky/", Why: "git hooks husky installs"},
	{Path: ".pre-commit-config.yaml", Why: "pre-commit hooks"},
	{Path: "lefthook.yml", Why: "lefthook hooks"},
	{Path: ".lefthook.yml", Why: "lefthook hooks"},
	{Path: "lefthook-local.yml", Why: "lefthook hooks"},
	{Path: ".lefthook/", Why: "lefthook scripts"},
	{Path: ".lintstagedrc", Why: "commands lint-staged runs at commit"},
	{Path: ".lintstagedrc.*", Why: "commands lint-staged runs at commit"},
	{Path: "lint-staged.config.*", Why: "commands lint-staged runs at commit"},
	{Path: ".simple-git-hooks.json", Why: "git hooks"},
	// CI: what the project's pipelines run, with its secrets.
	{Path: ".github", PolicyOnly: true, Why: "renaming it moves the workflows"},
	{Path: ".github/workflows/", Why: "CI workflows"},
	{Path: ".github/actions/", Why: "local actions workflows use"},
	{Path: ".gitlab-ci.yml", Why: "CI pipeline"},
	{Path: ".gitlab/", Why: "CI includes"},
	{Path: ".circleci/", Why: "CI pipeline"},
	{Path: ".buildkite/", Why: "CI pipeline"},
	{Path: "azure-pipelines.yml", Why: "CI pipeline"},
	{Path: "bitbucket-pipelines.yml", Why: "CI pipeline"},
	{Path: ".travis.yml", Why: "CI pipeline"},
	// Environments and package managers: what later commands obey.
	{Path: ".envrc", Nested: true, Why: "direnv runs it on cd"},
	{Path: ".npmrc", Why: "registries and scripts npm obeys"},
	{Path: ".yarnrc", Why: "yarn settings"},
	{Path: ".yarnrc.yml", Why: "yarnPath and plugins yarn runs"},
	{Path: ".yarn/releases/", Why: "the yarn yarnPath runs"},
	{Path: ".yarn/plugins/", Why: "yarn plugins"},
	{Path: ".pnpmfile.cjs", Why: "hooks pnpm runs at install"},
	{Path: "bunfig.toml", Why: "bun preload scripts"},
	{Path: ".pypirc", Why: "upload credentials and targets"},
	{Path: "pip.conf", Why: "index pip installs from"},
	{Path: "pip.ini", Why: "index pip installs from"},
	{Path: "uv.toml", Why: "index uv installs from"},
	{Path: ".cargo/", Why: "cargo aliases, runners, rustc wrappers"},
	{Path: "rust-toolchain", Why: "the toolchain rustup runs"},
	{Path: "rust-toolchain.toml", Why: "the toolchain rustup runs"},
	{Path: ".bazelrc", Why: "bazel startup options"},
	{Path: ".tool-versions", Why: "toolchains asdf and mise run"},
	{Path: ".mise.toml", Why: "mise tasks and hooks"},
	{Path: "mise.toml", Why: "mise tasks and hooks"},
	{Path: ".pip/", Why: "pip settings"},
	{Path: ".config/", Why: "tools' settings in the project"},
	{Path: ".bundle/", Why: "bundler settings"},
}

// Match reports whether rel, a clean slash-separated path relative to the
// root, is a protected path or lies in one. policyOnly entries count.
func Match(rel string) bool {
	_, ok := Lookup(rel)
	return ok
}

// Lookup returns the entry that protects rel.
func Lookup(rel string) (Entry, bool) {
	if strings.Contains(rel, "..") || strings.Contains(rel, "//") || strings.HasPrefix(rel, "./") || strings.Contains(rel, "/./") {
		rel = path.Clean("/" + rel)
	}
	rel = strings.Trim(rel, "/")
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
				if e := Table[i]; (first || e.Nested) && e.matches(rest) {
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
	byFirst  map[string][]int // an entry's first component, literal → entries
	patterns []int            // entries whose first component is a pattern
}

var index = sync.OnceValue(func() tableIndex {
	idx := tableIndex{byFirst: map[string][]int{}}
	for i, e := range Table {
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
