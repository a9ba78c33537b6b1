package analysis

import "strings"

// execOpt is an option whose value is a command line the program will run.
type execOpt struct {
	short byte   // 'e' for -e CMD and -eCMD
	long  string // "--rsh" for --rsh CMD and --rsh=CMD; "-exec" for Go's flags
	// prefix must start the value for it to be a command, and is removed:
	// tar --checkpoint-action=exec=CMD.
	prefix string
}

// execOpts lists, per program (or "git SUBCOMMAND"), the options that run a command.
var execOpts = map[string][]execOpt{
	"tar": {{long: "--to-command"}, {long: "--use-compress-program"}, {short: 'I'}, {long: "--rsh-command"},
		{long: "--info-script"}, {long: "--new-volume-script"}, {short: 'F'}, {long: "--checkpoint-action", prefix: "exec="}},
	"sort":  {{long: "--compress-program"}},
	"rsync": {{short: 'e'}, {long: "--rsh"}, {long: "--rsync-path"}},
	"rg":    {{long: "--pre"}},
	"go":    {{long: "-exec"}, {long: "--exec"}, {long: "-toolexec"}, {long: "--toolexec"}},
	"zip":   {{long: "-TT"}, {long: "--unzip-command"}},
	"scp":   {{short: 'S'}},
	"ssh":   {{short: 'o', prefix: "ProxyCommand="}, {short: 'o', prefix: "LocalCommand="}},
	"sftp":  {{short: 'S'}},

	"git difftool":  {{short: 'x'}, {long: "--extcmd"}},
	"git rebase":    {{short: 'x'}, {long: "--exec"}},
	"git grep":      {{short: 'O'}, {long: "--open-files-in-pager"}},
	"git clone":     {{short: 'u'}, {long: "--upload-pack"}},
	"git fetch":     {{long: "--upload-pack"}},
	"git pull":      {{long: "--upload-pack"}},
	"git ls-remote": {{long: "--upload-pack"}},
	"git push":      {{long: "--receive-pack"}, {long: "--exec"}},
	"git archive":   {{long: "--exec"}},
}

// execOptions records and analyses the options of c (at idx) that run commands.
// key is c.Name, or "git SUB" with args the arguments after the subcommand.
func (w *walker) execOptions(idx int, key string, args []string, flags []ArgFlag) {
	c := w.res.Commands[idx]
	for _, o := range execOpts[key] {
		vals, at := optValues(args, o.short, o.long)
		if o.short == 'O' && key == "git grep" {
			// git grep -O[pager]: the value is optional and always attached.
			vals, at = nil, nil
			for i, a := range args {
				if strings.HasPrefix(a, "-O") {
					vals, at = append(vals, a[2:]), append(at, i)
				}
			}
		}
		for k, v := range vals {
			if o.prefix != "" {
				var ok bool
				if v, ok = strings.CutPrefix(v, o.prefix); !ok {
					continue
				}
			}
			name := o.long
			if name == "" {
				name = "-" + string(o.short)
			}
			cc := &w.res.Commands[idx]
			cc.ExecOpts = append(cc.ExecOpts, name)
			if flags[at[k]]&ArgDynamic != 0 {
				w.findAt(FindEval, c, key+" "+name+" runs a command only known at run time")
				continue
			}
			if v != "" {
				w.nestedVia(v, key+" "+name, c.Pos, c.Via, true, nil)
			}
		}
	}
}
