package analysis

import (
	"strings"
)

// execOpt is an option whose value is a command line the program will run.
type execOpt struct {
	name string // as the option parser names it: "e", "to-command"
	// prefix must start the value for it to be a command, and is removed:
	// tar --checkpoint-action=exec=CMD.
	prefix string
}

// execOpts lists, per program (or "git SUBCOMMAND"), the options that run a command.
var execOpts = map[string][]execOpt{
	"tar": {{name: "to-command"}, {name: "use-compress-program"}, {name: "I"}, {name: "rsh-command"}, {name: "rmt-command"},
		{name: "info-script"}, {name: "new-volume-script"}, {name: "F"}, {name: "checkpoint-action", prefix: "exec="}},
	"sort":  {{name: "compress-program"}},
	"rsync": {{name: "e"}, {name: "rsh"}, {name: "rsync-path"}},
	"rg":    {{name: "pre"}, {name: "hostname-bin"}},
	"go":    {{name: "exec"}, {name: "toolexec"}},
	"zip":   {{name: "TT"}, {name: "unzip-command"}},
	"scp":   {{name: "S"}},
	"ssh":   {{name: "o", prefix: "ProxyCommand="}, {name: "o", prefix: "LocalCommand="}},
	"sftp":  {{name: "S"}},
	"split": {{name: "filter"}},
	"man":   {{name: "H"}, {name: "html"}},
	"fd":    {{name: "x"}, {name: "exec"}, {name: "X"}, {name: "exec-batch"}},

	"parallel": {{name: "ssh"}},

	"git difftool":  {{name: "x"}, {name: "extcmd"}},
	"git rebase":    {{name: "x"}, {name: "exec"}},
	"git grep":      {{name: "O"}, {name: "open-files-in-pager"}},
	"git clone":     {{name: "u"}, {name: "upload-pack"}},
	"git fetch":     {{name: "upload-pack"}},
	"git pull":      {{name: "upload-pack"}},
	"git ls-remote": {{name: "upload-pack"}},
	"git push":      {{name: "receive-pack"}, {name: "exec"}},
	"git archive":   {{name: "exec"}},
}

// execOptions records and analyses the options of c (at idx) that run
// commands; key is c.Name, or "git SUB".
func (w *walker) execOptions(idx int, key string) {
	c := w.res.Commands[idx]
	list := execOpts[key]
	if len(list) == 0 {
		return
	}
	for _, o := range c.Opts {
		for _, e := range list {
			if o.Name != e.name && !(o.Ambiguous && strings.HasPrefix(e.name, o.Name)) {
				continue
			}
			v := o.Value
			if e.prefix != "" {
				var ok bool
				if v, ok = strings.CutPrefix(v, e.prefix); !ok {
					continue
				}
			}
			label := optLabel(e.name)
			if key != "fd" {
				// fd's command is judged as a command, like find -exec's.
				cc := &w.res.Commands[idx]
				cc.ExecOpts = append(cc.ExecOpts, label)
			}
			if c.OptFlag(o)&ArgDynamic != 0 {
				w.findAt(FindEval, c, key+" "+label+" runs a command only known at run time")
				break
			}
			if key == "fd" && o.HasValue {
				// fd -x CMD ARGS… [;]: the command is the rest of the line,
				// run on every path found.
				in := inner(&c, o.At, "fd "+label)
				for k, a := range in.Args {
					if a == ";" {
						in.Args, in.Flags = in.Args[:k], in.Flags[:k]
						break
					}
				}
				in.MoreArgs = true
				w.run(in, input{})
			} else if v != "" && o.HasValue {
				w.nestedVia(v, key+" "+label, c.Pos, c.Via, true, nil)
			}
			break
		}
	}
}

// optLabel writes an option name the way a user would: -e, --to-command.
func optLabel(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
