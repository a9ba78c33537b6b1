package analysis

import "strings"

// chdirTo records that the command at idx works in dir.
func (w *walker) chdirTo(idx int, dir string, f ArgFlag) {
	c := &w.res.Commands[idx]
	if f&(ArgDynamic|ArgGlob) != 0 {
		c.ChdirUnknown = true
		return
	}
	abs := w.cwd.join(dir)
	if abs == nil {
		c.ChdirUnknown = true
		return
	}
	for _, a := range abs {
		c.Chdir = append(c.Chdir, w.resolve(a))
	}
}

// cd follows cd, pushd and popd.
func (w *walker) cd(idx int) (ok, fail dirs) {
	in := w.cwd
	c := &w.res.Commands[idx]
	if c.Name == "popd" {
		return nil, in
	}
	i := 0
	for i < len(c.Args) && len(c.Args[i]) > 1 && c.Args[i][0] == '-' {
		if c.Args[i] == "--" {
			i++
			break
		}
		if c.Name == "pushd" && (c.Args[i][1] >= '0' && c.Args[i][1] <= '9') {
			break
		}
		i++
	}
	var target string
	switch {
	case i >= len(c.Args):
		if c.Name == "pushd" {
			c.ChdirUnknown = true
			return nil, in
		}
		h, known := w.lookup("HOME")
		if !known {
			c.ChdirUnknown = true
			return nil, in
		}
		target = h
	case c.Flags[i]&(ArgDynamic|ArgGlob) != 0:
		c.ChdirUnknown = true
		return nil, in
	case c.Args[i] == "-":
		o, known := w.lookup("OLDPWD")
		if !known {
			c.ChdirUnknown = true
			return nil, in
		}
		target = o
	case strings.HasPrefix(c.Args[i], "+") || strings.HasPrefix(c.Args[i], "-"):
		c.ChdirUnknown = true // pushd +N: the directory stack
		return nil, in
	default:
		target = c.Args[i]
	}
	if _, cdpath := w.vars["CDPATH"]; cdpath && !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, ".") {
		c.ChdirUnknown = true
		return nil, in
	}
	abs := in.join(target)
	if abs == nil {
		c.ChdirUnknown = true
		return nil, in
	}
	var out dirs
	for _, a := range abs {
		r := w.resolve(a)
		c.Chdir = append(c.Chdir, r)
		if !contains(out, r) {
			out = append(out, r)
		}
	}
	if len(in) == 1 {
		w.setVar("OLDPWD", varVal{val: in[0], known: true})
	} else {
		w.unknownVar("OLDPWD")
	}
	return out, in
}
