package policy

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/protect"

	"github.com/shellgate/shellgate/internal/analysis"
	"github.com/shellgate/shellgate/internal/realpath"
)

// place is where a path a command writes to lies.
type place int

const (
	inside    place = iota // inside the project root
	writable               // the temp dir, a configured writable path, /dev/null …
	protected              // inside the root, but runs later outside any check
	unknown                // only known at run time
	outside                // outside the root
	device                 // a disk or memory device, /proc/sysrq-trigger
)

// harmlessTargets may always be written.
var harmlessTargets = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
	"/dev/zero": true, "-": true,
}

// isHarmlessTarget reports the command's own standard streams and descriptors,
// written exactly: /dev/fd/3, but not /dev/fd/../../etc, which the resolver
// follows like any other path.
func isHarmlessTarget(p string) bool {
	return harmlessTargets[p] || realpath.IsDescriptor(p)
}

// isDevice reports the device files whose writing destroys data or the system.
func isDevice(p string) bool {
	if p == "/proc/sysrq-trigger" || p == "/dev/mem" || p == "/dev/kmem" || p == "/dev/port" {
		return true
	}
	dev, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	for _, prefix := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "dm-", "md", "loop", "sr", "nbd", "zd"} {
		if strings.HasPrefix(dev, prefix) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it, component by component.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

// globDir turns a glob into a path that stands for its matches: the directory
// before the first glob character, and something in it.
func globDir(p string) string {
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return p
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j < 0 {
		return "x"
	}
	return p[:j+1] + "x"
}

// globProtected reports a glob whose last name may match a protected path
// where it stands (rm -rf .git*, find . -name '.vsc*' -delete), and returns
// that path; globDir keeps only the directory. The shell expands a glob
// against the directory as it is, which is read (a name that is not there
// is not deleted); find's patterns, matched at every depth, and a glob in a
// glob's directory are compared with the protected names themselves.
func (x *check) globProtected(c *analysis.Command, p string, f analysis.ArgFlag) (string, bool) {
	if x.root == "" {
		return "", false
	}
	dir, name := "", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, name = p[:i+1], p[i+1:]
	}
	if name == "" {
		return "", false
	}
	var names []string
	byName := f&analysis.ArgGlobDot != 0
	if strings.ContainsAny(dir, "*?[") {
		dir, byName = globDir(strings.TrimSuffix(dir, "/"))+"/", true // no one directory to read
	}
	if byName {
		names = protectedNames(protect.Fold(name), f&analysis.ArgGlobDot != 0)
	}
	for _, abs := range c.Abs(dir + ".") {
		if !byName {
			if x.placeOf(x.resolve(abs)) != inside && x.placeOf(x.resolve(abs)) != protected {
				continue // the root's protected paths lie in the root
			}
			names = entriesMatching(abs, name)
		}
		for _, n := range names {
			if r := x.resolve(filepath.Join(abs, n)); x.placeOf(r) == protected {
				return r, true
			}
		}
	}
	return "", false
}

// entriesMatching are the names in dir that the shell's glob g matches (a
// leading dot only by a dot), as far as a large directory's first names go,
// that may be protected: a protected name, or a link, which may lead to one.
// Each is resolved then; a directory of build outputs costs no look at each.
func entriesMatching(dir, g string) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	es, _ := d.ReadDir(100000)
	var out []string
	for _, e := range es {
		n := e.Name()
		if strings.HasPrefix(n, ".") && !strings.HasPrefix(g, ".") {
			continue
		}
		if ok, err := path.Match(g, n); (ok || err != nil) && (e.Type()&os.ModeSymlink != 0 || protectedName(n)) {
			out = append(out, n)
		}
	}
	return out
}

// protectedName reports a name that begins or is a protected path somewhere.
func protectedName(n string) bool {
	n = protect.Fold(n)
	names := nameSets()
	if names.literal[n] {
		return true
	}
	for _, p := range names.patterns {
		if ok, _ := path.Match(p, n); ok {
			return true
		}
	}
	return false
}

// nameSets are protect.Names split into literal names and patterns, made
// on first use.
var nameSets = sync.OnceValue(func() (s struct {
	literal  map[string]bool
	patterns []string
}) {
	s.literal = map[string]bool{}
	for _, n := range protect.Names() {
		if strings.ContainsAny(n, `*?[\`) {
			s.patterns = append(s.patterns, n)
		} else {
			s.literal[n] = true
		}
	}
	return s
})

// protectedNames are the protected names (protect.Names) the folded glob g
// may match, a pattern among them written as a name it matches: a literal
// one where g matches it, a pattern where their literal beginnings or ends
// agree (lefthook* and lefthook.*, not *.pyc and lefthook.*). A leading dot
// is matched only by a dot unless dot (find's patterns).
func protectedNames(g string, dot bool) []string {
	const meta = `*?[]\`
	out := []string{}
	for _, n := range protect.Names() {
		if !dot && strings.HasPrefix(n, ".") && !strings.HasPrefix(g, ".") {
			continue
		}
		if !strings.ContainsAny(n, meta) {
			if ok, err := path.Match(g, n); ok || err != nil {
				out = append(out, n)
			}
			continue
		}
		gp, np := g[:max(0, strings.IndexAny(g, meta))], n[:strings.IndexAny(n, meta)]
		gs, ns := g[strings.LastIndexAny(g, meta)+1:], n[strings.LastIndexAny(n, meta)+1:]
		if gp != "" && np != "" && (strings.HasPrefix(gp, np) || strings.HasPrefix(np, gp)) ||
			gs != "" && ns != "" && (strings.HasSuffix(gs, ns) || strings.HasSuffix(ns, gs)) {
			out = append(out, strings.NewReplacer("*", "x", "?", "x").Replace(n))
		}
	}
	return out
}

// where classifies a path that c writes, and returns the resolved path.
func (x *check) where(c *analysis.Command, p string, f analysis.ArgFlag) (place, string) {
	if f&analysis.ArgDynamic != 0 {
		return unknown, p
	}
	if isHarmlessTarget(p) {
		return writable, p
	}
	if f&analysis.ArgGlob != 0 {
		if r, ok := x.globProtected(c, p, f); ok {
			return protected, r
		}
		p = globDir(p)
	}
	abs := c.Abs(p)
	if abs == nil {
		return unknown, p
	}
	worst, worstPath := inside, ""
	for _, a := range abs {
		r := x.resolve(a)
		pl := x.placeOf(r)
		if pl > worst || worstPath == "" {
			worst, worstPath = max(worst, pl), r
		}
	}
	return worst, worstPath
}

// placeOf classifies a resolved absolute path.
func (x *check) placeOf(r string) place {
	switch {
	case isHarmlessTarget(r):
		return writable
	case isDevice(r):
		return device
	case x.root != "" && within(r, x.root):
		if isProtected(strings.TrimPrefix(strings.TrimPrefix(r, x.root), "/")) {
			return protected
		}
		return inside
	}
	for _, w := range x.writable {
		if within(r, w) {
			return writable
		}
	}
	return outside
}

// isProtected reports whether rel (relative to the root) is a file that runs
// later outside any check, or a directory holding such files (see package
// protect, whose table the sandbox reads too).
func isProtected(rel string) bool { return protect.Match(rel) }

// resolve follows symlinks, remembering answers for the length of one check.
func (x *check) resolve(p string) string {
	if r, ok := x.cache[p]; ok {
		return r
	}
	var r string
	if x.root != "" && within(p, x.root) {
		// The root is resolved already: only what lies below it can be a link.
		r = realpath.ResolveIn(x.root, strings.TrimPrefix(p[len(x.root):], "/"))
	} else {
		r = realpath.Resolve(p)
	}
	if x.cache == nil {
		x.cache = map[string]string{}
	}
	x.cache[p] = r
	return r
}
