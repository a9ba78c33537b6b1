package mcpserver

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// toolDescription tells the model the rules in force on this server, like seed 000's
// bash.txt. It is a text/template over descriptionData.
//
//go:embed tool_description.txt
var toolDescription string

// descriptionTemplate is parsed when a server starts, not when any subcommand does.
var descriptionTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("tool_description.txt").Funcs(template.FuncMap{"example": ruleExample}).Parse(toolDescription))
})

// MaxDescription is the most characters a tool description may have: Claude Code
// cuts MCP tool descriptions at about 2 048, and its model never sees the rest.
const MaxDescription = 2000

// ruleExamples are a few words per built-in rule, for a description that must
// name every rule in force within MaxDescription (policy.Rules has the long form).
var ruleExamples = map[string]string{
	policy.RuleCatastrophic: "rm -rf /, mkfs",
	policy.RulePrivilege:    "sudo",
	policy.RuleRemoteCode:   "curl | sh",
	policy.RuleInteractive:  "editors, pagers, REPLs",
	policy.RuleExecFlags:    "find -exec, git -c, LD_PRELOAD",
	policy.RuleStoredCode:   "eval, source",
	policy.RuleProtected:    ".git/hooks, .vscode, .envrc",
	policy.RuleDynamic:      "program or path known only at run time",
	policy.RuleEscape:       "docker, crontab",
	policy.RuleOtherShell:   "PowerShell, cmd, zsh",
	policy.RuleLoseWork:     "git reset --hard, git clean -f",
	policy.RuleDedicated:    "ls, cat, grep: use your own tools",
	policy.RuleUntrusted:    "anything not read-only",
	policy.RuleSecrets:      "~/.ssh, ~/.aws",
}

func ruleExample(id string) string { return ruleExamples[id] }

// descriptionData is what the tool description may refer to.
type descriptionData struct {
	shellgate.Info
	DefaultTimeoutMS int64
	// DefaultTimeoutText is the default timeout as a person writes it: 2m,
	// not Go's 2m0s.
	DefaultTimeoutText string
	MaxTimeoutMS       int64
	NeverAsk           bool
	Terse              bool              // no examples of the rules
	Denied, Asked      []policy.RuleInfo // built-in rules that apply here
}

// describe renders the tool description for info.
func describe(info shellgate.Info) (string, error) {
	d := descriptionData{
		Info:               info,
		DefaultTimeoutMS:   info.DefaultTimeout.Milliseconds(),
		DefaultTimeoutText: envelope.Duration(info.DefaultTimeout),
		MaxTimeoutMS:       info.MaxTimeout.Milliseconds(),
		NeverAsk:           info.Mode == policy.ModeNever,
	}
	if d.Mode == "" {
		d.Mode = policy.ModeAuto // the zero Settings' mode
	}
	for _, r := range info.Rules { // only the rules in force
		switch {
		case r.Decision == policy.Deny:
			d.Denied = append(d.Denied, r)
		case r.Decision == policy.Ask:
			d.Asked = append(d.Asked, r)
		}
	}
	// Examples of the rules while the whole fits in MaxDescription; without them
	// if not (a long root or allow-list); cut at a line past that.
	var out string
	for _, d.Terse = range []bool{false, true} {
		var b strings.Builder
		if err := descriptionTemplate().Execute(&b, d); err != nil {
			return "", fmt.Errorf("tool description: %w", err)
		}
		if out = b.String(); utf8.RuneCountInString(out) <= MaxDescription {
			return out, nil
		}
	}
	for utf8.RuneCountInString(out) > MaxDescription {
		i := strings.LastIndexByte(strings.TrimSuffix(out, "\n"), '\n')
		if i < 0 {
			return string([]rune(out)[:MaxDescription]), nil
		}
		out = out[:i+1]
	}
	return out, nil
}
