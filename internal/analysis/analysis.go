// Package analysis parses a bash command line (mvdan.cc/sh/v3/syntax, Bash variant)
// into every simple command it would run: wherever it stands in the syntax tree,
// behind whichever wrapper, inside whichever string a shell or eval would re-parse.
//
// It decides nothing: package policy judges the result.
package analysis

import (
	"time"

	"github.com/shellgate/shellgate/internal/analysis/opts"
)

// Options describe where a command line starts. All paths are absolute.
type Options struct {
	Root string // the project root
	Dir  string // where the command starts; Root when empty
	Home string // the value of $HOME and ~; unknown when empty
	// Vars are variables the environment gives the command before it runs, such as
	// TMPDIR; an assignment in the command line overrides them.
	Vars map[string]string

	// Resolve follows symlinks in an absolute, clean path whose tail may not
	// exist yet. Nil means realpath.Resolve; the policy engine passes a cached one.
	Resolve func(string) string

	// Budget bounds the time the analysis may take; DefaultBudget when zero.
	// Past it, Analyze fails with ErrCost. On Linux it is the CPU time the
	// analysis uses, so that a loaded machine does not change a verdict.
	Budget time.Duration
}

// Analysis is everything a command line would run.
type Analysis struct {
	// Commands in source order. A wrapper (env, timeout, sudo, bash -c, …) is a
	// command of its own and is followed by the command it runs.
	Commands []Command
	// Findings are constructs that run text decided at run time and that no
	// single command stands for: ${x@P}, ${!x}, fork bombs, eval of a variable…
	Findings []Finding
}

// Pos is a 1-based position in the original input. A command found inside a
// string that is re-parsed (bash -c '…', eval, trap) has the string's position.
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// ArgFlag describes how an argument was written.
type ArgFlag uint8

const (
	// ArgDynamic: the argument's value is only known at run time (a variable, a
	// substitution); the Args entry holds its source text.
	ArgDynamic ArgFlag = 1 << iota
	// ArgGlob: the argument holds unquoted glob characters (*, ?, [).
	ArgGlob
	// ArgQuoted: some part of the argument was quoted.
	ArgQuoted
	// ArgGlobDot: the glob's characters match a leading dot too (find's
	// -name patterns), where the shell's do not.
	ArgGlobDot
	// ArgFound: the argument is find -exec's {}, each path find finds: the
	// Args entry is a starting point, what is found lies below it; one {}
	// is an entry per starting point, the second on ArgFoundAgain (for
	// shellgate check, which shows the {} as written).
	ArgFound
	ArgFoundAgain
	// ArgFoundIn: the argument holds find -exec's {} in other text
	// ("{}.bak"): the Args entry has a path below the first starting
	// point in its place, not source text, even where ArgDynamic.
	ArgFoundIn
)

// Kind says what sort of command a Command is.
type Kind uint8

const (
	Simple Kind = iota // a simple command: name and arguments
	Assign             // assignments only (x=1, export x=1, declare, local …); Name is "" or the builtin
	Redirs             // redirections only, as in "> file" or ": > file" without a name
)

// Command is one simple command the shell would run.
type Command struct {
	Kind Kind `json:"-"`
	// Name is the program, quote-removed and without directories: "rm" for
	// "/usr/bin/rm", "\rm" or "'r''m'". Empty when Dynamic.
	Name string `json:"name"`
	// Path is the command word as written, after quote removal.
	Path string `json:"path,omitempty"`
	// Args are the arguments after quote removal. A dynamic argument holds its
	// source text (see Flags).
	Args  []string  `json:"args"`
	Flags []ArgFlag `json:"-"`
	// Dynamic reports that the program itself is only known at run time.
	Dynamic bool `json:"dynamic,omitempty"`
	// MoreArgs reports that arguments are appended at run time (xargs).
	MoreArgs bool `json:"more_args,omitempty"`

	Pos    Pos    `json:"pos"`
	Source string `json:"source"` // the text of this sub-command

	// Dirs are the directories the command may start in, as far as cd/pushd
	// can be followed through the line; empty when unknown. Dir is the only
	// one, or "" when there are several or none.
	Dir  string   `json:"dir,omitempty"`
	Dirs []string `json:"-"`

	// Chdir are the directories the command changes into or operates on:
	// cd/pushd targets and directory options (git -C, make -C, tar -C, env -C,
	// npm --prefix, go -C), resolved. ChdirUnknown reports a target only known
	// at run time (a variable, cd - with a forged OLDPWD, CDPATH …).
	Chdir        []string `json:"chdir,omitempty"`
	ChdirUnknown bool     `json:"chdir_unknown,omitempty"`

	// What the program makes of its arguments, read by the one option parser
	// (package opts) with the program's grammar. Sub is the subcommand (git
	// commit, go build) and SubAt its index in Args (-1: none); Global are the
	// options before it (git -C, -c), Opts those of the program or subcommand.
	// Operands are indexes in Args; OptsEnd is, for a program whose options end
	// at its first operand (a wrapper), the index of that operand. Parsed is
	// false when shellgate knows no grammar for the program: every option was
	// then read as taking no value.
	Sub      string     `json:"sub,omitempty"`
	SubAt    int        `json:"-"`
	Global   []opts.Opt `json:"global_opts,omitempty"`
	Opts     []opts.Opt `json:"opts,omitempty"`
	Operands []int      `json:"-"`
	OptsEnd  int        `json:"-"`
	Parsed   bool       `json:"-"`

	// ExecOpts are the options given that make the program run another one
	// (tar --to-command, rg --pre, go test -exec, git rebase -x …). Their values
	// are analysed as commands too.
	ExecOpts []string `json:"exec_opts,omitempty"`

	Assigns   []Assignment `json:"assigns,omitempty"`   // NAME=value before the command, or the assignments of export/declare
	Redirects []Redirect   `json:"redirects,omitempty"` // its own redirections and those of enclosing blocks

	// Via lists the wrappers this command was unwrapped from, outermost first,
	// e.g. ["sudo", "env"], ["bash -c"], ["find -exec"].
	Via []string `json:"via,omitempty"`
	// Feeds are indexes in Analysis.Commands of the commands whose output this
	// one reads: earlier pipeline stages and substitutions in its words.
	Feeds []int `json:"-"`
	// PipedOut reports that the standard output goes into a pipe.
	PipedOut   bool   `json:"-"`
	Background bool   `json:"background,omitempty"`
	Func       string `json:"func,omitempty"` // the enclosing function, if any
	// Superseded: a function's body as walked at its definition, with its
	// arguments unknown, where every call of it was followed with the words
	// it was given; the calls' commands are judged instead.
	Superseded bool `json:"superseded,omitempty"`

	varsDone bool // the command-valued assignments were analysed with a wrapper
}

// Assignment is NAME=value.
type Assignment struct {
	Name    string `json:"name"`
	Value   string `json:"value"` // quote-removed; source text when Dynamic
	Dynamic bool   `json:"dynamic,omitempty"`
	Export  bool   `json:"export,omitempty"` // lasts for the rest of the line (plain or export), rather than one command
}

// Redirect is one redirection of a command.
type Redirect struct {
	Op      string `json:"op"`     // ">", ">>", "<", "<>", ">&", "&>", "<<<"…
	Target  string `json:"target"` // quote-removed; source text when Dynamic
	Dynamic bool   `json:"dynamic,omitempty"`
	// Write reports that the target is a file opened for writing.
	Write bool `json:"write,omitempty"`
}

// FindingKind names a construct that runs text decided at run time.
type FindingKind string

const (
	FindEval       FindingKind = "eval"        // eval, bash -c, source… of text only known at run time
	FindTrap       FindingKind = "trap"        // trap with a non-literal action
	FindAlias      FindingKind = "alias"       // alias with a non-literal body
	FindArith      FindingKind = "arithmetic"  // arithmetic on a variable whose value is not a literal number
	FindPrompt     FindingKind = "prompt"      // ${x@P}
	FindIndirect   FindingKind = "indirect"    // ${!x}
	FindForkBomb   FindingKind = "fork-bomb"   // a function that starts itself in the background or a pipe
	FindStdinShell FindingKind = "stdin-shell" // a shell reading commands from a pipe or a file
	FindDepth      FindingKind = "depth"       // strings nested too deep to follow
	FindHash       FindingKind = "hash"        // hash -p: a name made to run another program
	FindParse      FindingKind = "parse"       // a string a shell would re-parse does not parse
)

// Finding is a construct that runs text decided at run time.
type Finding struct {
	Kind   FindingKind `json:"kind"`
	Pos    Pos         `json:"pos"`
	Source string      `json:"source"`
	Detail string      `json:"detail,omitempty"`
}
