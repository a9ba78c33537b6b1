// Package policies holds one shellgate configuration per design seed, each reproducing
// that seed's command policy with shellgate's rules:
//
//   - 000-dm_cc.toml: dm_cc's list of dangerous commands (rm, mv, cp, chmod, kill, …).
//   - 001-bashtool.toml: BashTool's minimal blacklist, no interactive commands, network
//     behind BASH_ALLOW_NETWORK=true, the dedicated read/search tools, MYCODEAGENT=1.
//   - 002-shellexecutor.toml: ShellExecutor's four patterns and directory locking.
//   - 003-gemini-cli.toml: Gemini CLI's allowlist with confirmation.
//
// Use one with `shellgate check --config examples/policies/001-bashtool.toml -- CMD`.
// The tests in this directory check each seed's documented cases under its file.
package policies
