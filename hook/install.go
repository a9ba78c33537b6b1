package hook

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// settingsSpec is where an agent keeps its hooks and the shape of one entry.
type settingsSpec struct {
	userFile string // relative to the home directory
	// homeEnv names a variable that moves the agent's own directory (Codex's
	// CODEX_HOME, for ~/.codex): userFile's base name is then looked up in it.
	homeEnv     string
	projectFile string // relative to the project root
	event       string // the key under "hooks"
	matcher     string // the tool matcher of the group; "" for none
	name        string // the hook's "name" field, where the agent has one
	timeoutKey  string
	timeout     int
	flat        bool // Cursor: entries sit directly under the event, with "version": 1 at the top
}

// UserSettings is the agent's settings file in home, or in the directory the
// agent's own variable names (getenv), as the agent reads it.
func (a *Agent) UserSettings(home string, getenv func(string) string) string {
	if d := getenv(a.settings.homeEnv); a.settings.homeEnv != "" && d != "" {
		return filepath.Join(d, path.Base(a.settings.userFile))
	}
	return filepath.Join(home, filepath.FromSlash(a.settings.userFile))
}

// ProjectSettings is the agent's settings file in a project.
func (a *Agent) ProjectSettings(root string) string {
	return filepath.Join(root, filepath.FromSlash(a.settings.projectFile))
}

// Install adds a hook running command to the settings in data (empty data is an
// empty file) and returns the new settings. Everything else is kept as it was,
// in its order; a hook that already runs this agent's shellgate hook is left alone.
func (a *Agent) Install(data []byte, command string) ([]byte, error) {
	root, hooks, err := a.hooksOf(data, true)
	if err != nil {
		return nil, err
	}
	list, _ := hooks.get(a.settings.event)
	entries, ok := list.([]any)
	if list != nil && !ok {
		return nil, fmt.Errorf("\"hooks\".%q is not a JSON array", a.settings.event)
	}
	if a.installed(entries) {
		return data, nil
	}
	hooks.set(a.settings.event, append(entries, a.entry(command)))
	return formatJSON(root), nil
}

// Uninstall removes every hook of this agent's shellgate hook from the settings,
// and the groups, event lists and hooks object that this leaves empty.
func (a *Agent) Uninstall(data []byte) ([]byte, error) {
	root, hooks, err := a.hooksOf(data, false)
	if err != nil || hooks == nil {
		return data, err
	}
	list, _ := hooks.get(a.settings.event)
	entries, ok := list.([]any)
	if !ok {
		return data, nil
	}
	var kept []any
	changed := false
	for _, e := range entries {
		if a.settings.flat {
			if a.ours(e) {
				changed = true
				continue
			}
			kept = append(kept, e)
			continue
		}
		g, ok := e.(*object)
		inner, _ := g.vals["hooks"].([]any)
		if !ok || inner == nil {
			kept = append(kept, e)
			continue
		}
		var rest []any
		for _, h := range inner {
			if a.ours(h) {
				changed = true
				continue
			}
			rest = append(rest, h)
		}
		if len(rest) == 0 && len(rest) != len(inner) {
			continue
		}
		if len(rest) != len(inner) {
			g.set("hooks", rest)
		}
		kept = append(kept, e)
	}
	if !changed {
		return data, nil
	}
	if len(kept) == 0 {
		hooks.del(a.settings.event)
	} else {
		hooks.set(a.settings.event, kept)
	}
	if len(hooks.keys) == 0 {
		root.del("hooks")
	}
	return formatJSON(root), nil
}

// hooksOf parses the settings and finds their "hooks" object, creating it (and
// Cursor's version) when create is set.
func (a *Agent) hooksOf(data []byte, create bool) (*object, *object, error) {
	root := newObject()
	if len(bytes.TrimSpace(data)) > 0 {
		v, err := parseJSON(data)
		if err != nil {
			return nil, nil, fmt.Errorf("not valid JSON: %v", err)
		}
		o, ok := v.(*object)
		if !ok {
			return nil, nil, fmt.Errorf("not a JSON object")
		}
		root = o
	}
	h, ok := root.get("hooks")
	if !ok {
		if !create {
			return root, nil, nil
		}
		if a.settings.flat {
			if _, ok := root.get("version"); !ok {
				root.set("version", jsonInt(1))
			}
		}
		h = newObject()
		root.set("hooks", h)
	}
	hooks, ok := h.(*object)
	if !ok {
		return nil, nil, fmt.Errorf("\"hooks\" is not a JSON object")
	}
	return root, hooks, nil
}

func (a *Agent) entry(command string) any {
	h := newObject()
	if a.settings.name != "" {
		h.set("name", a.settings.name)
	}
	if !a.settings.flat {
		h.set("type", "command")
	}
	h.set("command", command)
	if a.settings.timeoutKey != "" {
		h.set(a.settings.timeoutKey, jsonInt(a.settings.timeout))
	}
	if a.settings.flat {
		return h
	}
	g := newObject()
	if a.settings.matcher != "" {
		g.set("matcher", a.settings.matcher)
	}
	g.set("hooks", []any{h})
	return g
}

// installed reports whether entries already run this agent's shellgate hook.
func (a *Agent) installed(entries []any) bool {
	for _, e := range entries {
		if a.ours(e) {
			return true
		}
		if g, ok := e.(*object); ok {
			inner, _ := g.vals["hooks"].([]any)
			for _, h := range inner {
				if a.ours(h) {
					return true
				}
			}
		}
	}
	return false
}

// ours reports whether a hook entry runs "shellgate hook <agent>", whatever path
// or quoting the shellgate program was written with.
func (a *Agent) ours(e any) bool {
	h, ok := e.(*object)
	if !ok {
		return false
	}
	cmd, _ := h.vals["command"].(string)
	prog, rest, ok := strings.Cut(cmd, " hook ")
	if !ok || strings.Fields(rest)[0] != a.Name {
		return false
	}
	prog = strings.ToLower(strings.Trim(prog, `"' `))
	return strings.HasSuffix(prog, "shellgate") || strings.HasSuffix(prog, "shellgate.exe")
}

// jsonInt is n as the decoder would have read it.
func jsonInt(n int) any { return jsonNumber(fmt.Sprint(n)) }
