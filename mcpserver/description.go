package mcpserver

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/policy"
)

// toolDescription tells the model the rules in force on this server, like seed 000's
// bash.txt. It is a text/template over descriptionData.
//
//go:embed tool_description.txt
var toolDescription string

// descriptionTemplate is parsed when a server starts, not when any subcommand does.
var descriptionTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("tool_description.txt").Parse(toolDescription))
})

// descriptionData is what the tool description may refer to.
type descriptionData struct {
	shellgate.Info
	DefaultTimeoutMS int64
	MaxTimeoutMS     int64
	NeverAsk         bool
	Denied, Asked    []policy.RuleInfo // built-in rules that apply here
}

// describe renders the tool description for info.
func describe(info shellgate.Info) (string, error) {
	d := descriptionData{
		Info:             info,
		DefaultTimeoutMS: info.DefaultTimeout.Milliseconds(),
		MaxTimeoutMS:     info.MaxTimeout.Milliseconds(),
		NeverAsk:         info.Mode == policy.ModeNever,
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
	var b strings.Builder
	if err := descriptionTemplate().Execute(&b, d); err != nil {
		return "", fmt.Errorf("tool description: %w", err)
	}
	return b.String(), nil
}
