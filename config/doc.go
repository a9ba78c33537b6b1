// Package config loads shellgate's strict TOML configuration into a shellgate.Config.
//
// # Where configuration comes from
//
// Layers are merged in this order, each over the one before:
//
//  1. the built-in defaults (shellgate.Config's zero value, policy.Settings' built-in rules);
//  2. the user file, os.UserConfigDir()/shellgate/config.toml (missing is fine);
//  3. the project file, <root>/.shellgate.toml (missing is fine);
//  4. the file given with --config (missing is an error);
//  5. flags and the environment: BASH_ALLOW_NETWORK=true turns the network on (seed 001),
//     and the caller applies its own flags to the returned Config.
//
// Scalars (shell, limits, mode, network, …) are replaced by a later layer that sets them.
// Lists (allow, ask, deny, relax, writable, secrets.keep) accumulate across layers, so a
// later file adds rules but never drops one an earlier file made; [env] tables merge key by
// key.
//
// # The project file is not trusted
//
// .shellgate.toml lives in the repository, so whoever writes the repository — possibly
// the agent itself — writes it. On its own it may only make things stricter: add deny and
// ask patterns, choose a stricter mode (auto < untrusted < never), turn the network off, turn
// secret stripping or dedicated_tools on, set limits. Settings that would loosen
// policy or change what runs — policy.allow, policy.relax, policy.writable, network = true,
// a laxer mode, dedicated_tools = false, shell, [env], secrets.keep, secrets.strip = false,
// limits.spill_dir, and [audit] settings that turn the log off, move it or make it keep
// less — are ignored with a warning (reported in Sources.Warnings, with file and
// line) unless the user file or the --config file says trust_project_config = true.
// Limits (timeouts, sizes) are not policy: a project file may set them within their bounds.
//
// # File format
//
// Every key is optional. An unknown key, a value of the wrong type, or a value out of range
// is an error naming the file, the line and the key, e.g.
//
//	.shellgate.toml:7: unknown key "netwrok" in [policy]
//
// The keys (see examples/shellgate.toml for a commented file):
//
//	root = "."                      # project root; only in the user or --config file
//	shell = "bash"                  # a shell name or path
//	trust_project_config = false    # only in the user or --config file
//
//	[limits]
//	default_timeout = "120s"        # durations are strings: "500ms", "90s", "2m"; 1ms…600s
//	max_timeout = "600s"
//	kill_grace = "2s"               # SIGTERM → SIGKILL; at most 2s
//	output_limit = "50KB"           # sizes: bytes as an integer, or "512B", "50KB", "4MB", "1GB" (1KB = 1024)
//	max_output_limit = "512KB"      # the most a call may ask for with max_output_bytes
//	spill_dir = "/var/tmp/shellgate"
//	spill_max = "1GB"
//	spill_retention = "24h"
//
//	[env]                           # added to every command's environment
//	MYCODEAGENT = "1"
//
//	[secrets]
//	strip = true                    # strip secret-looking variables (the default)
//	keep = ["MY_PUBLIC_KEY_ID"]     # except these
//
//	[policy]
//	mode = "auto"                   # auto | untrusted | never
//	network = false
//	dedicated_tools = false
//	allow = ["make *"]              # command prefix patterns, matched token by token (quoted as in the shell)
//	ask = ["npm publish *"]
//	deny = ["git push --force *"]
//	relax = ["interactive"]         # built-in rules to switch off, by name
//	writable = ["~/.cache/go-build"] # paths outside the root commands may write
//
//	[audit]                         # one JSON line per request (package audit)
//	enabled = true                  # the default
//	path = "~/.local/state/shellgate/audit.jsonl" # default: the user state directory
//	max_size = "10MB"               # rotated past this size …
//	keep = 3                        # … keeping this many older files
//
// Paths (root, spill_dir, writable, audit.path) may start with ~ and are otherwise taken relative to
// the directory of the file that names them; they come out absolute and clean.
package config
