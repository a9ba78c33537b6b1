package hook

import (
	"path/filepath"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"
)

// With CLAUDE_CODE_SHELL_PREFIX set, Claude Code's Bash tool does not hand the
// prefix the model's command but a script around it, as one argument (read from
// Claude Code 2.1.328; its documentation does not describe it):
//
//	source '~/.claude/shell-snapshots/snapshot-bash-….sh' 2>/dev/null || true && …
//	&& eval '<the model's command>' < /dev/null && pwd -P >| '/tmp/claude-<id>-cwd'
//
// Two parts of it are refused by a policy that does not know them: sourcing the
// snapshot of the user's shell (stored code) and writing the file through which
// Claude Code learns the working directory (outside the project). Everything else,
// the model's command included, is judged as usual.

// cwdFileName is claude-<id>-cwd; snapshotName is snapshot-<shell>-<id>.sh. Plain
// string checks rather than regexps: package init runs before every hook answer.
func cwdFileName(name string) bool {
	return shaped(name, "claude-", "-cwd", func(r rune) bool { return isAlnum(r) })
}

func snapshotName(name string) bool {
	return shaped(name, "snapshot-", ".sh", func(r rune) bool { return isAlnum(r) || strings.ContainsRune("_.-", r) })
}

func shaped(name, prefix, suffix string, ok func(rune) bool) bool {
	if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) || len(name) <= len(prefix)+len(suffix) {
		return false
	}
	mid := name[len(prefix) : len(name)-len(suffix)]
	return strings.IndexFunc(mid, func(r rune) bool { return !ok(r) }) < 0
}

func isAlnum(r rune) bool { return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// ClaudeCodeBash is what shellgate exec reads in a Claude Code Bash wrapper.
type ClaudeCodeBash struct {
	// Writable is the cwd file the script may write (for
	// policy.Settings.WritablePaths: that one file).
	Writable []string
	// Allow is the snapshot the script may source (for policy.Settings.Allow: that
	// one command).
	Allow []string
	// Visible is that snapshot file, which the sandbox's view must show (it
	// shows nothing of ~/.claude otherwise).
	Visible []string
	// Command is the model's command, as the eval before the cwd step holds it;
	// "" when the script does not have that shape.
	Command string
}

// ParseClaudeCodeBash finds, in script, what a policy must let it do for Claude
// Code to work through the prefix. Both exceptions are found only in the shapes
// above, as literal paths: the cwd file as the last step of the top-level && list,
// directly in one of tmpDirs (Claude Code's temp dir, which the prefix inherits);
// the snapshot directly in home's .claude/shell-snapshots. A model that builds the
// same shape itself gains no more than that: writing a directory name into one file
// called claude-*-cwd in the temp dir, and sourcing a file outside the project,
// where it cannot write.
func ParseClaudeCodeBash(script, home string, tmpDirs ...string) ClaudeCodeBash {
	var w ClaudeCodeBash
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil || len(f.Stmts) != 1 {
		return w
	}
	top := f.Stmts[0]
	if b, ok := top.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt && plain(top) {
		if p := cwdFile(b.Y); p != "" && inAny(filepath.Dir(p), tmpDirs) {
			w.Writable = append(w.Writable, p)
			w.Command = evalText(lastStep(b.X))
		}
	}
	if home == "" {
		return w
	}
	snapshots := filepath.Join(home, ".claude", "shell-snapshots") + string(filepath.Separator)
	for _, s := range steps(top) {
		args := callArgs(s)
		if len(args) == 2 && (args[0] == "source" || args[0] == ".") &&
			!strings.ContainsAny(args[1], "*?[\\ \t\n") && // it becomes an allow pattern
			strings.HasPrefix(args[1], snapshots) && snapshotName(filepath.Base(args[1])) &&
			filepath.Dir(args[1])+string(filepath.Separator) == snapshots {
			w.Allow = append(w.Allow, args[0]+" "+args[1])
			w.Visible = append(w.Visible, args[1])
		}
	}
	return w
}

// CommandWords reads line as a shell would run it when it is one simple command
// of literal words, as a hook command in Claude Code's settings usually is
// (`/usr/local/bin/shellgate hook claude-code`), which Claude Code hands
// CLAUDE_CODE_SHELL_PREFIX as one argument. It returns the words, with a leading
// ~/ of the first expanded to home as the shell would, and false for anything
// more: several commands, a pipe, a redirect, an assignment, an expansion or a
// glob. The caller can then know what that line would run without running a shell.
func CommandWords(line, home string) ([]string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return nil, false
	}
	var tilde bool
	if l, ok := c.Args[0].Parts[0].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~/") && home != "" {
		// Only the first part: ~ is expanded at the start of a word alone.
		c.Args[0].Parts[0] = &syntax.Lit{Value: strings.TrimPrefix(l.Value, "~")}
		tilde = true
	}
	words := callArgs(f.Stmts[0])
	if words == nil {
		return nil, false
	}
	if tilde {
		words[0] = filepath.Join(home, words[0])
	}
	return words, true
}

// lastStep is the right-most command of a && list.
func lastStep(s *syntax.Stmt) *syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt && plain(s) {
		return b.Y
	}
	return s
}

// evalText is the text of `eval 'TEXT'`, alone or reading /dev/null.
func evalText(s *syntax.Stmt) string {
	args := callArgs(s)
	if len(args) != 2 || args[0] != "eval" {
		return ""
	}
	for _, r := range s.Redirs {
		if v, ok := literal(r.Word); r.Op != syntax.RdrIn || r.N != nil || !ok || v != "/dev/null" {
			return ""
		}
	}
	return args[1]
}

// steps flattens a list of && and || into the commands it chains.
func steps(s *syntax.Stmt) []*syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) && plain(s) {
		return append(steps(b.X), steps(b.Y)...)
	}
	return []*syntax.Stmt{s}
}

func plain(s *syntax.Stmt) bool {
	return !s.Negated && !s.Background && !s.Coprocess && len(s.Redirs) == 0
}

// cwdFile is the file of a `pwd -P >| FILE` step, if that is what s is.
func cwdFile(s *syntax.Stmt) string {
	if args := callArgs(s); len(args) != 2 || args[0] != "pwd" || args[1] != "-P" || len(s.Redirs) != 1 {
		return ""
	}
	r := s.Redirs[0]
	if r.Op != syntax.RdrClob || r.N != nil {
		return ""
	}
	p, ok := literal(r.Word)
	if !ok || !filepath.IsAbs(p) || !cwdFileName(filepath.Base(p)) || filepath.Clean(p) != p {
		return ""
	}
	return p
}

// callArgs is the words of a simple command without assignments, if each is a
// literal; nil otherwise.
func callArgs(s *syntax.Stmt) []string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 || s.Negated || s.Background || s.Coprocess {
		return nil
	}
	args := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		v, ok := literal(w)
		if !ok {
			return nil
		}
		args = append(args, v)
	}
	return args
}

// literal is the value of a word made only of quoted and plain text, as Claude
// Code's quoting writes it ('…' with '"'"' for a quote); false if anything in it is
// expanded or globbed.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[~") {
				return "", false
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsRune(l.Value, '\\') {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of unquoted text: \x is x.
func unescape(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func inAny(dir string, dirs []string) bool {
	for _, d := range dirs {
		if d != "" && filepath.Clean(d) == dir {
			return true
		}
	}
	return false
}
