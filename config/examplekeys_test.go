package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// README and docs/configuration.md send the reader to examples/shellgate.toml
// for every key: each key a file may hold is there, set or in a comment
// ("# key = …"), in its own table. keeper_idle and the two
// ignored_link_*_size keys were missing.
func TestExampleFileNamesEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "shellgate.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// The example's text under each table header ("" before the first).
	tables := map[string]string{}
	table := ""
	header := regexp.MustCompile(`^\[([a-z_]+)\]`)
	for _, line := range strings.Split(string(data), "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		tables[table] += line + "\n"
	}
	ft := reflect.TypeFor[fileConfig]()
	for i := range ft.NumField() {
		f := ft.Field(i)
		name := strings.Split(f.Tag.Get("toml"), ",")[0]
		if f.Type.Kind() != reflect.Struct {
			if f.Type.Kind() == reflect.Map { // [env]: names of the user's own
				if _, ok := tables[name]; !ok {
					t.Errorf("examples/shellgate.toml has no [%s]", name)
				}
				continue
			}
			if !namesKey(tables[""], name) {
				t.Errorf("examples/shellgate.toml does not name the top-level key %s", name)
			}
			continue
		}
		for j := range f.Type.NumField() {
			key := strings.Split(f.Type.Field(j).Tag.Get("toml"), ",")[0]
			if key != "" && key != "-" && !namesKey(tables[name], key) {
				t.Errorf("examples/shellgate.toml does not name %s in [%s]", key, name)
			}
		}
	}
}

// namesKey reports whether text sets key or shows it in a comment: "key =" or
// "# key =" at the start of a line.
func namesKey(text, key string) bool {
	return regexp.MustCompile(`(?m)^(#\s*)?` + regexp.QuoteMeta(key) + `\s*=`).MatchString(text)
}
