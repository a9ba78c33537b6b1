package analysis

import "strings"

// FindStartingPoints returns the paths find searches ("." when none is given).
func FindStartingPoints(args []string) []string {
	var starts []string
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' || a == "(" || a == "!" || a == "," {
			break
		}
		starts = append(starts, a)
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	return starts
}

// findExec follows find … -exec/-execdir/-ok/-okdir COMMAND… ; or +.
func (w *walker) findExec(idx int, stdin input) {
	c := w.res.Commands[idx]
	starts := FindStartingPoints(c.Args)
	for i := 0; i < len(c.Args); i++ {
		action := c.Args[i]
		if action != "-exec" && action != "-execdir" && action != "-ok" && action != "-okdir" {
			continue
		}
		j := i + 1
		for j < len(c.Args) && c.Args[j] != ";" && c.Args[j] != "+" {
			j++
		}
		if j == i+1 {
			continue
		}
		cmd := Command{Pos: c.Pos, Source: c.Source, Via: c.Via, Feeds: c.Feeds, Redirects: c.Redirects}
		// What find finds lies below its starting points; but given to a shell
		// or eval, a file name is code only known at run time.
		var found ArgFlag
		n := baseName(c.Args[i+1])
		if _, wrapped := wrappers[n]; shells[n] || wrapped || n == "eval" || n == "source" || n == "." {
			found = ArgDynamic
		}
		for k := i + 1; k < j; k++ {
			a, f := c.Args[k], c.Flags[k]
			switch {
			case a == "{}":
				for _, s := range starts {
					cmd.Args = append(cmd.Args, s)
					cmd.Flags = append(cmd.Flags, f|found)
				}
			case strings.Contains(a, "{}"):
				cmd.Args = append(cmd.Args, strings.ReplaceAll(a, "{}", strings.TrimSuffix(starts[0], "/")+"/x"))
				cmd.Flags = append(cmd.Flags, f|found)
			default:
				cmd.Args = append(cmd.Args, a)
				cmd.Flags = append(cmd.Flags, f)
			}
		}
		in := inner(&cmd, 0, "find "+action)
		cwd := w.cwd
		if action == "-execdir" || action == "-okdir" {
			var ds dirs
			for _, s := range starts {
				for _, a := range cwd.join(s) {
					ds = append(ds, w.resolve(a))
				}
			}
			w.cwd = ds
		}
		w.run(in, input{})
		w.cwd = cwd
		i = j
	}
}

// xargs follows xargs [options] [COMMAND…]: the command gets more arguments
// from input at run time.
func (w *walker) xargs(idx int, stdin input) {
	c := w.res.Commands[idx]
	i := c.OptsEnd
	repl := ""
	for _, o := range c.Opts {
		switch o.Name {
		case "I":
			repl = o.Value
		case "i", "replace":
			repl = "{}"
			if o.HasValue && o.Value != "" {
				repl = o.Value
			}
		}
	}
	var in Command
	if i >= len(c.Args) {
		in = inner(&Command{Args: []string{"echo"}, Flags: []ArgFlag{0}, Via: c.Via, Pos: c.Pos, Source: c.Source}, 0, "xargs")
	} else {
		in = inner(&c, i, "xargs")
	}
	in.MoreArgs = true
	in.Feeds = c.Feeds
	if repl != "" {
		for k, a := range in.Args {
			if strings.Contains(a, repl) {
				in.Flags[k] |= ArgDynamic
			}
		}
	}
	w.run(in, input{})
}
