package sandbox

import "testing"

// Mode and profile names as a user writes them ([sandbox] mode, --sandbox,
// --profile): each name, "" for the default, and a clear error for a typo.
func TestParseNames(t *testing.T) {
	for _, c := range []struct {
		in, mode, profile string
		modeErr, profErr  string
	}{
		{in: "", mode: "auto", profile: "workspace-write"},
		{in: "auto", mode: "auto", profErr: `sandbox profile "auto": want read-only, workspace-write or full-access`},
		{in: "on", mode: "on", profErr: `sandbox profile "on": want read-only, workspace-write or full-access`},
		{in: "off", mode: "off", profErr: `sandbox profile "off": want read-only, workspace-write or full-access`},
		{in: "read-only", profile: "read-only", modeErr: `sandbox mode "read-only": want auto, on or off`},
		{in: "workspace-write", profile: "workspace-write", modeErr: `sandbox mode "workspace-write": want auto, on or off`},
		{in: "full-access", profile: "full-access", modeErr: `sandbox mode "full-access": want auto, on or off`},
		{in: "On", modeErr: `sandbox mode "On": want auto, on or off`,
			profErr: `sandbox profile "On": want read-only, workspace-write or full-access`},
	} {
		m, err := ParseMode(c.in)
		if string(m) != c.mode || errText(err) != c.modeErr {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, %q", c.in, m, err, c.mode, c.modeErr)
		}
		p, err := ParseProfile(c.in)
		if string(p) != c.profile || errText(err) != c.profErr {
			t.Errorf("ParseProfile(%q) = %q, %v; want %q, %q", c.in, p, err, c.profile, c.profErr)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
