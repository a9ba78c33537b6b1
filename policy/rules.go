package policy

// Built-in rule ids.
const (
	RuleParse        = "parse"
	RuleCatastrophic = "catastrophic"
	RulePrivilege    = "privilege"
	RuleRemoteCode   = "remote-code"
	RuleNetwork      = "network"
	RuleInteractive  = "interactive"
	RuleConfinement  = "confinement"
	RuleExecFlags    = "code-execution"
	RuleStoredCode   = "stored-code"
	RuleProtected    = "protected-paths"
	RuleDynamic      = "dynamic"
	RuleEscape       = "sandbox-escape"
	RuleLoseWork     = "lose-work"
	RuleOtherShell   = "other-shell"
	RuleDedicated    = "dedicated-tools"
	RuleUntrusted    = "untrusted"
	RuleSecrets      = "secrets"
	RuleUserDeny     = "user.deny"
	RuleUserAsk      = "user.ask"
	// RuleEnv refuses every command when the Env itself is unusable (no root,
	// a relative directory): a programming error in the caller, not a rule
	// that can be relaxed.
	RuleEnv = "environment"
)

// RuleInfo describes a built-in rule.
type RuleInfo struct {
	ID          string   `json:"id"`
	Decision    Decision `json:"decision"`
	Description string   `json:"description"`
}

var rules = []RuleInfo{
	{RuleParse, Deny, "the command line is not valid bash: refused rather than guessed"},
	{RuleCatastrophic, Deny, "deletes or overwrites the system: rm -rf /, mkfs, dd onto disks, shutdown, fork bombs"},
	{RulePrivilege, Deny, "gains privileges: sudo, su, doas, pkexec"},
	{RuleRemoteCode, Deny, "runs code fetched from the network: curl … | sh, bash <(curl …)"},
	{RuleNetwork, Deny, "network clients (curl, wget, ssh, nc, /dev/tcp …) while the network is off"},
	{RuleInteractive, Deny, "needs a terminal: editors, pagers, REPLs, git add -p, tail -f"},
	{RuleConfinement, Deny, "changes directory or files outside the project root"},
	{RuleExecFlags, Ask, "runs programs through options, git config or environment variables"},
	{RuleStoredCode, Ask, "evaluates text only known at run time: eval, source, trap, alias, ${x@P}, ${!x}"},
	{RuleProtected, Ask, "writes files that run later outside any check: .git/hooks, .vscode, .envrc …"},
	{RuleDynamic, Ask, "a program name or directory only known at run time"},
	{RuleEscape, Ask, "hands work to a daemon outside every sandbox: docker, systemd-run, crontab, at"},
	{RuleOtherShell, Ask, "PowerShell and cmd.exe lines beyond one read-only command, and every zsh or fish line: their syntax is not bash's"},
	{RuleLoseWork, Ask, "throws away work inside the project: git reset --hard, git clean -f, git checkout -- ., git stash drop, git branch -D"},
	{RuleDedicated, Deny, "ls, cat, head, tail, grep, find, rg when the agent has its own tools (off by default)"},
	{RuleSecrets, Ask, "reads ~/.ssh, ~/.aws and the other credentials the sandbox hides, or a credential store, where no sandbox will (a hook without shellgate's prefix, --sandbox off)"},
	{RuleUntrusted, Ask, "untrusted mode: anything outside the known read-only set"},
	// Not rules of the built-in policy, but names a refusal can give: listed so that
	// every rule a message names is in the table. They cannot be relaxed.
	{RuleUserDeny, Deny, "matches a deny pattern of the shellgate configuration ([policy] deny)"},
	{RuleUserAsk, Ask, "matches an ask pattern of the shellgate configuration ([policy] ask)"},
	{RuleEnv, Deny, "shellgate itself is misconfigured (no project root, a relative directory): every command is refused"},
}

// fixed reports the listed names that are not built-in rules of their own and so
// cannot be relaxed: the user's patterns (edit them instead) and misconfiguration.
func fixed(id string) bool { return id == RuleEnv || isUserRule(id) }

// Rules lists the built-in rules with one-line descriptions.
func Rules() []RuleInfo {
	return append([]RuleInfo(nil), rules...)
}

func isRule(id string) bool {
	for _, r := range rules {
		if r.ID == id {
			return true
		}
	}
	return false
}

func ruleIDs() []string {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	return ids
}
