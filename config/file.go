package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// fileConfig is one TOML file as written. Pointers tell "not set" from a zero value, so
// a layer changes only what it names.
type fileConfig struct {
	Root               *string           `toml:"root"`
	Shell              *string           `toml:"shell"`
	TrustProjectConfig *bool             `toml:"trust_project_config"`
	Limits             limitsTable       `toml:"limits"`
	Env                map[string]string `toml:"env"`
	Secrets            secretsTable      `toml:"secrets"`
	Policy             policyTable       `toml:"policy"`
	Sandbox            sandboxTable      `toml:"sandbox"`
	Network            networkTable      `toml:"network"`
	Audit              auditTable        `toml:"audit"`
	Session            sessionTable      `toml:"session"`
	Checkpoints        checkpointsTable  `toml:"checkpoints"`
}

type limitsTable struct {
	DefaultTimeout *string `toml:"default_timeout"`
	MaxTimeout     *string `toml:"max_timeout"`
	KillGrace      *string `toml:"kill_grace"`
	OutputLimit    any     `toml:"output_limit"` // integer bytes or "50KB"
	MaxOutputLimit any     `toml:"max_output_limit"`
	SpillDir       *string `toml:"spill_dir"`
	SpillMax       any     `toml:"spill_max"`
	SpillTotal     any     `toml:"spill_total"`
	SpillRetention *string `toml:"spill_retention"`
}

type secretsTable struct {
	Strip *bool    `toml:"strip"`
	Keep  []string `toml:"keep"`
}

type policyTable struct {
	Mode           *string  `toml:"mode"`
	Network        *bool    `toml:"network"`
	DedicatedTools *bool    `toml:"dedicated_tools"`
	Allow          []string `toml:"allow"`
	Ask            []string `toml:"ask"`
	Deny           []string `toml:"deny"`
	Relax          []string `toml:"relax"`
	Writable       []string `toml:"writable"`
}

// parsedFile is a decoded file with what is needed to point at its lines.
type parsedFile struct {
	path string // as shown in messages
	abs  string // absolute, for relative paths in the file
	cfg  fileConfig
	keys keyLines
}

// maxFileSize bounds what we read: a configuration file is a few kilobytes, and a huge
// one is a mistake (or a trap) better reported than parsed.
const maxFileSize = 1 << 20

// parseFile decodes data strictly. name is the file name used in messages.
func parseFile(name string, data []byte) (*parsedFile, error) {
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: file is larger than %d bytes; is it really a shellgate configuration?", name, maxFileSize)
	}
	pf := &parsedFile{path: name}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&pf.cfg)
	// The key positions are needed for decode errors too (to name the table of an
	// inline-table key), and the document parsed if decoding got this far.
	pf.keys = indexKeys(data)
	if err != nil {
		if e := unquoted(name, data, err); e != nil {
			return nil, e
		}
		return nil, pf.decodeError(err)
	}
	return pf, nil
}

// unquoted explains a syntax error at a value written without its quotes
// (mode = never, deny = [git push *]), which go-toml reports as
// `expected keyword "nan"` or `unexpected character U+0061 'a' at start of
// value`: it names the key and shows the line as it should be. Any other error
// is nil, for decodeError.
func unquoted(file string, data []byte, err error) error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return nil
	}
	line, _ := de.Position()
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return nil
	}
	key, value, ok := strings.Cut(lines[line-1], "=")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || !bareKey().MatchString(key) {
		return nil
	}
	if i := strings.Index(value, " #"); i >= 0 {
		value = strings.TrimSpace(value[:i])
	}
	var fixed string
	if inner, ok := strings.CutPrefix(value, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return nil
		}
		var words []string
		for w := range strings.SplitSeq(inner, ",") {
			if w = strings.TrimSpace(w); w != "" {
				words = append(words, quoteBare(w))
			}
		}
		fixed = "[" + strings.Join(words, ", ") + "]"
	} else {
		fixed = quoteBare(value)
	}
	if fixed == value {
		return nil
	}
	name := key
	for i := line - 2; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); strings.HasPrefix(t, "[") {
			name = t + " " + key
			break
		}
	}
	return &ConfigError{File: file, Line: line, Key: key,
		Msg: fmt.Sprintf("%s: a string needs quotes: %s = %s", name, key, fixed)}
}

// quoteBare quotes w if it is a bare word that TOML cannot read as a value
// (not a boolean, number or string already); otherwise it is returned as is.
func quoteBare(w string) string {
	switch {
	case w == "", w == "true" || w == "false" || w == "inf" || w == "nan",
		strings.HasPrefix(w, `"`) || strings.HasPrefix(w, "'") || strings.HasPrefix(w, "{"),
		strings.ContainsAny(w[:1], "0123456789+-"):
		return w
	}
	return strconv.Quote(w)
}

// bareKey matches a key as written before "=": bare or dotted, no quotes.
var bareKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
})

// ConfigError is a problem in one configuration file, at one line and key.
type ConfigError struct {
	File string
	Line int    // 1-based; 0 if unknown
	Key  string // dotted key, e.g. "policy.netwrok"; "" if none
	Msg  string
}

func (e ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// errorAt builds an error about the value of key (a dotted path) in this file.
func (pf *parsedFile) errorAt(key, format string, args ...any) error {
	table, name := splitKey(key)
	msg := fmt.Sprintf(format, args...)
	where := name
	if table != "" {
		where = fmt.Sprintf("[%s] %s", table, name)
	}
	return &ConfigError{File: pf.path, Line: pf.keys.line(key), Key: key, Msg: where + ": " + msg}
}

// decodeError turns go-toml's errors into "file:line: what is wrong" messages.
func (pf *parsedFile) decodeError(err error) error {
	var missing *toml.StrictMissingError
	if errors.As(err, &missing) {
		var errs []error
		for i := range missing.Errors {
			errs = append(errs, pf.unknownKey(&missing.Errors[i]))
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		key := strings.Join(de.Key(), ".")
		if k, ok := pf.keys.at(line, col); ok {
			key = k
		}
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := typeMismatch().FindStringSubmatch(msg); m != nil && key != "" {
			msg = fmt.Sprintf("want %s, got a TOML %s", goTypeWords(m[2]), m[1])
		}
		if key != "" && !strings.Contains(msg, "already defined") {
			table, name := splitKey(key)
			if table != "" {
				name = "[" + table + "] " + name
			}
			msg = name + ": " + msg
		}
		return &ConfigError{File: pf.path, Line: line, Key: key, Msg: msg}
	}
	return fmt.Errorf("%s: %w", pf.path, err)
}

func (pf *parsedFile) unknownKey(de *toml.DecodeError) error {
	line, col := de.Position()
	key := strings.Join(de.Key(), ".")
	if k, ok := pf.keys.at(line, col); ok {
		key = k
	}
	table, name := splitKey(key)
	what := "key"
	if strings.Contains(de.Error(), "table") {
		what = "table"
	}
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if table != "" {
		msg += " in [" + table + "]"
	}
	if hint := suggest(key); hint != "" {
		msg += "; did you mean " + hint + "?"
	}
	return &ConfigError{File: pf.path, Line: line, Key: key, Msg: msg}
}

// typeMismatch reads go-toml's type errors; compiled when one happens, not at every start.
var typeMismatch = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^cannot decode TOML (\w+) into (?:.*? of type )?(\S+)$`)
})

// goTypeWords says in TOML words what a Go field type accepts.
func goTypeWords(goType string) string {
	switch goType {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "[]string":
		return "an array of strings"
	case "map[string]string":
		return "a table of strings"
	}
	if strings.HasPrefix(goType, "config.") {
		return "a table"
	}
	return goType
}

// splitKey splits "policy.allow" into ("policy", "allow").
func splitKey(key string) (table, name string) {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// keyLines maps every key of a document to where it is written.
type keyLines struct {
	lines map[string]int    // dotted key → line of its first mention
	pos   map[[2]int]string // (line, column) of a key → dotted key
}

func (k keyLines) line(key string) int {
	for key != "" {
		if l, ok := k.lines[key]; ok {
			return l
		}
		// A value inside an inline table has no line of its own here; use its table's.
		key, _ = splitKey(key)
	}
	return 0
}

func (k keyLines) at(line, col int) (string, bool) {
	key, ok := k.pos[[2]int{line, col}]
	return key, ok
}

// indexKeys walks the document's syntax to find where each key is written. go-toml's
// decoder reports positions but not always the enclosing table (inline tables), and
// nothing for errors found after decoding (a bad duration), so we keep our own index.
func indexKeys(data []byte) keyLines {
	k := keyLines{lines: map[string]int{}, pos: map[[2]int]string{}}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e.Key())
			k.record(&p, table, e.Key())
		case unstable.KeyValue:
			k.keyValue(&p, table, e)
		}
	}
	return k
}

func (k keyLines) keyValue(p *unstable.Parser, table []string, kv *unstable.Node) {
	it := kv.Key()
	full := append(append([]string(nil), table...), keyParts(kv.Key())...)
	k.record(p, full, it)
	if v := kv.Value(); v.Kind == unstable.InlineTable {
		children := v.Children()
		for children.Next() {
			if c := children.Node(); c.Kind == unstable.KeyValue {
				k.keyValue(p, full, c)
			}
		}
	}
}

// record notes the position of the first part of a key under its full dotted name.
func (k keyLines) record(p *unstable.Parser, full []string, it unstable.Iterator) {
	if !it.Next() {
		return
	}
	n := it.Node()
	if n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return
	}
	start := p.Shape(n.Raw).Start
	name := strings.Join(full, ".")
	if _, seen := k.lines[name]; !seen {
		k.lines[name] = start.Line
	}
	k.pos[[2]int{start.Line, start.Column}] = name
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}
