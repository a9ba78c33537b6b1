package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// A fact is one entry of a policy catalogue: for the programs it names, test
// says what the command does that the catalogue's rule is about, "" when the
// fact does not hold. Facts are knowledge, not procedure: the rule that reads
// a catalogue decides what a holding fact means (deny, ask, or allow).
//
// match and notMatch are command lines the fact must hold for and must not
// (near misses, other spellings): TestCatalogueExamples analyses each and
// checks the fact against its commands, so an entry and its examples cannot
// drift apart (the idea of Codex's execpolicy, whose rules carry match and
// not_match examples).
type fact struct {
	programs []string
	// listed names the programs by a lookup in one of the package's
	// lists instead (a fact for every program of networkClients): a
	// list's sorted keys would be built at every start, used or not.
	// Like programs, it takes a name as names are looked up (folded to
	// lower case where they fold).
	listed func(name string) bool
	// also names more programs by a predicate (mkfs.*, python3.12).
	also func(name string) bool
	test func(x *check, c *analysis.Command) string
	// rule is the rule a holding fact is reported under, where the
	// catalogue's facts differ in it.
	rule string
	// loopback: what the fact reports is moot where only the session's
	// private loopback is reached (a network client aimed at 127.0.0.1).
	loopback        bool
	match, notMatch []string
}

// catalogue is a table of facts looked up by program name, in order. It
// keeps no index: a catalogue has at most a few dozen facts, a lookup
// compares a name with their programs (well under a microsecond), and a
// one-shot `check` or hook, which looks up a handful of names, would spend
// more building maps for every catalogue as the process starts than it
// saves. A catalogue is written as a composite literal (&catalogue{facts:
// []fact{...}}), which the compiler lays out in the binary: built by a call
// at start, its facts' slices were ~220 allocations of every process.
type catalogue struct {
	facts []fact
}

// first returns the first fact that holds for c and what it says, or nil:
// first the facts that name c's program, in order, then those whose
// predicate takes it.
func (k *catalogue) first(x *check, c *analysis.Command) (*fact, string) {
	for i := range k.facts {
		if f := &k.facts[i]; f.names(c.Name) {
			if what := f.test(x, c); what != "" {
				return f, what
			}
		}
	}
	for i := range k.facts {
		if f := &k.facts[i]; f.also != nil && f.also(c.Name) {
			if what := f.test(x, c); what != "" {
				return f, what
			}
		}
	}
	return nil, ""
}

// names reports whether a fact of k names program name.
func (k *catalogue) names(name string) bool {
	for i := range k.facts {
		if k.facts[i].names(name) {
			return true
		}
	}
	return false
}

// names reports whether f lists program name, as names are looked up: where
// they fold to lower case, a listed name also in lower case.
func (f *fact) names(name string) bool {
	if f.listed != nil {
		return f.listed(name)
	}
	for _, p := range f.programs {
		if p == name || analysis.FoldsNames && strings.EqualFold(p, name) && strings.ToLower(p) == name {
			return true
		}
	}
	return false
}

// covers reports whether f applies to program name at all.
func (f *fact) covers(name string) bool {
	if f.listed != nil && (f.listed(name) || analysis.FoldsNames && f.listed(strings.ToLower(name))) {
		return true
	}
	for _, p := range f.programs {
		if p == name || analysis.FoldsNames && strings.EqualFold(p, name) {
			return true
		}
	}
	return f.also != nil && f.also(name)
}

// subOf is the first operand of c ("" when there is none): the subcommand of
// programs that take one after their own options.
func subOf(c *analysis.Command) string { return operand(c, 0) }

// operand is c's operand n, or "".
func operand(c *analysis.Command, n int) string {
	if len(c.Operands) > n {
		return c.Args[c.Operands[n]]
	}
	return ""
}

// oneOf reports whether s is among set.
func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// when returns what if ok, else "": the shape of a fact's test.
func when(ok bool, what string) string {
	if ok {
		return what
	}
	return ""
}
