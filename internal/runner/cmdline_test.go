package runner

import "testing"

func TestCmdExeLine(t *testing.T) {
	tests := []struct {
		path string
		argv []string
		want string
		ok   bool
	}{
		{`C:\Windows\System32\cmd.exe`, []string{"cmd", "/d", "/s", "/c", `echo "a b" & dir`},
			`C:\Windows\System32\cmd.exe /d /s /c "echo "a b" & dir"`, true},
		{`C:\Program Files\cmd.exe`, []string{"cmd", "/d", "/s", "/c", "ver"},
			`"C:\Program Files\cmd.exe" /d /s /c "ver"`, true},
		{`C:\Windows\System32\CMD.EXE`, []string{"cmd", "/d", "/s", "/c", ""},
			`C:\Windows\System32\CMD.EXE /d /s /c ""`, true},
		{`C:\Windows\System32\cmd.exe`, []string{"cmd", "/c", "ver"}, "", false},
		{`C:\pwsh.exe`, []string{"pwsh", "/d", "/s", "/c", "x"}, "", false},
	}
	for _, tt := range tests {
		got, ok := cmdExeLine(tt.path, tt.argv)
		if got != tt.want || ok != tt.ok {
			t.Errorf("cmdExeLine(%q, %q) = %q, %v; want %q, %v", tt.path, tt.argv, got, ok, tt.want, tt.ok)
		}
	}
}
