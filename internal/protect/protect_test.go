package protect

import (
	"slices"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{".git/hooks/pre-commit", true},
		{".git/objects/ab/cd", true}, // the policy asks about every write in .git
		{".vscode/tasks.json", true},
		{"sub/pkg/.vscode/settings.json", true},
		{"proj.code-workspace", true},
		{"a/b/team.code-workspace", true},
		{".gemini/settings.json", true},
		{".codex/config.toml", true},
		{"tools/.codex/config.toml", true},
		{".mcp.json", true},
		{"opencode.json", true},
		{".opencode/plugin/x.ts", true},
		{"lefthook.yml", true},
		{".lintstagedrc.json", true},
		{"lint-staged.config.mjs", true},
		{".github/actions/setup/action.yml", true},
		{".github/workflows/ci.yml", true},
		{".github", true},
		{".gitlab-ci.yml", true},
		{"HEAD", true},      // the root itself as a repository
		{"sub/HEAD", false}, // a nested one's is watched as a repository
		{".devcontainer.json", true},
		{".yarnrc.yml", true},
		{".yarn/releases/yarn-4.js", true},
		{".cargo/config.toml", true},
		{"rust-toolchain.toml", true},
		{"sub/.envrc", true},
		{"sub/.gitattributes", true},
		{"./.husky/pre-commit", true},
		{"a/../.claude/settings.json", true},
		// Tools look for their settings from where they run, upwards.
		{"sub/.npmrc", true},
		{"crates/x/.cargo/config.toml", true},
		{"tools/rs/rust-toolchain.toml", true},
		{"lefthook.toml", true},
		{"lefthook-local.yaml", true},
		{".qwen/settings.json", true},
		{".kiro/settings/mcp.json", true},
		{".amp/settings.json", true},
		{".trae/mcp.json", true},
		{".mvn/jvm.config", true},
		{"gradle.properties", true},
		{"gradle/wrapper/gradle-wrapper.properties", true},
		{"pnpm-workspace.yaml", true},
		{"packages/app/pnpm-workspace.yaml", true},
		{".helix/languages.toml", true},
		{".theia/tasks.json", true},
		{".bazeliskrc", true},
		{".bazelversion", true},
		{"sub/ws/.bazelversion", true}, // bazelisk looks upwards from where it runs
		{"tools/bazel", true},
		{"tools/bazel.sh", false},
		{"tools/lint.sh", false},
		{".jvmopts", true},
		{".sbtopts", true},
		{"devbox.json", true},
		{".pdm-python", true},
		{".gitpod.yml", true},
		{".hg/hgrc", true},
		{".jj/repo/config.toml", true},
		{".hg/store/data/x.i", false},
		// Ordinary project files.
		{".github/ISSUE_TEMPLATE/bug.md", false},
		{"src/main.go", false},
		{"docs/vscode.md", false},
		{".gitignore", false},
		{"package.json", false},
		{"sub/.github/workflows/ci.yml", false}, // CI runs a repository's top only
		{"sub/.git/hooks/pre-commit", false},    // a nested repository's: repowatch
		{"gradle/libs.versions.toml", false},
		{"", false},
	} {
		if got := Match(c.rel); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
}

// Every entry has a reason, and the kernel's and git's lists are drawn from
// the one table.
func TestTable(t *testing.T) {
	for _, e := range Table {
		if e.Why == "" {
			t.Errorf("%s: no reason", e.Path)
		}
		if !Match(e.Path) && !strings.Contains(e.Path, "*") {
			t.Errorf("%s does not match itself", e.Path)
		}
	}
	root := RootPaths()
	for _, p := range []string{".git/hooks", ".git/config", ".vscode", ".gemini", ".mcp.json", ".github/workflows", ".envrc", ".pdbrc", ".perldb", ".irbrc", ".Rprofile", "HEAD"} {
		if !slices.Contains(root, p) {
			t.Errorf("RootPaths lacks %s", p)
		}
	}
	for _, p := range []string{".git", ".github", "*.code-workspace"} {
		if slices.Contains(root, p) {
			t.Errorf("RootPaths has %s: the kernel would make it read-only", p)
		}
	}
}

// BenchmarkMatch is the policy's cost per path a command names.
func BenchmarkMatch(b *testing.B) {
	for b.Loop() {
		Match("src/internal/pkg/file.go")
		Match(".git/hooks/pre-commit")
		Match("sub/.vscode/tasks.json")
	}
}

func TestRootPatterns(t *testing.T) {
	got := RootPatterns()
	for _, want := range []string{"*.code-workspace", ".lintstagedrc.*", "lint-staged.config.*"} {
		if !slices.Contains(got, want) {
			t.Errorf("RootPatterns %v lacks %s", got, want)
		}
	}
}

// Guarded: what the kernel keeps read-only, not what only the policy asks
// about (.git as a whole).
func TestGuarded(t *testing.T) {
	for rel, want := range map[string]bool{
		".git/config":            true,
		".git/hooks/pre-commit":  true,
		".git/index":             false,
		".git/objects/ab/cdef":   false,
		".vscode/tasks.json":     true,
		"src/main.go":            false,
		"packages/app/.claude/x": true,
	} {
		if got := Guarded(rel); got != want {
			t.Errorf("Guarded(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestMatchFolded: where a directory folds case (ext4 casefold, vfat,
// exfat, APFS, NTFS, a Windows drive under WSL) a name differing from a
// protected one in case, or by a letter such a file system folds to an ASCII
// one, is the protected file the host's tool opens.
func TestMatchFolded(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{".VSCODE/tasks.json", true},
		{".VsCode/settings.json", true},
		{".GIT/config", true},
		{".Git/HOOKS/pre-commit", true},
		{".ENVRC", true},
		{"sub/.EnvRC", true},
		{"Proj.CODE-WORKSPACE", true},
		{"head", true},
		{"LEFTHOOK.YML", true},
		{".GITHUB/WORKFLOWS/ci.yml", true},
		{".rprofile", true},
		{".RPROFILE", true},
		{".claude/SETTINGS.json", true},
		{".vſcode/tasks.json", true},       // ſ (U+017F) folds to s
		{".ſhellgate.toml", true},          // and in a file's name
		{"\u212Airo.json", false},          // the Kelvin sign folds to k, but kiro.json is no entry
		{".\u212Airo/settings.json", true}, // .kiro/
		{".GITHUB/ISSUE_TEMPLATE/bug.md", false},
		{"SUB/.GITHUB/WORKFLOWS/ci.yml", false},
		{"Src/Main.go", false},
		{".vscodé/tasks.json", false},
	} {
		if got := Match(c.rel); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		".vscode":     ".vscode",
		".VSCODE":     ".vscode",
		"HEAD":        "head",
		".vſcode":     ".vscode",
		"\u212Airo":   "kiro",
		"Ünïcode.txt": "Ünïcode.txt", // no ASCII letter in their orbits: as they were
		"":            "",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}
