package policy

import (
	"github.com/shellgate/shellgate/internal/protect"
	"strings"

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

// where classifies a path that c writes, and returns the resolved path.
func (x *check) where(c *analysis.Command, p string, f analysis.ArgFlag) (place, string) {
	if f&analysis.ArgDynamic != 0 {
		return unknown, p
	}
	if isHarmlessTarget(p) {
		return writable, p
	}
	if f&analysis.ArgGlob != 0 {
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
