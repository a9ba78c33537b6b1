package shell

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestArgv(t *testing.T) {
	script := `echo "hi" && ls | wc -l`
	tests := []struct {
		shell Shell
		want  []string
	}{
		{Shell{"/usr/bin/bash", Bash}, []string{"/usr/bin/bash", "--noprofile", "--norc", "-c", script}},
		{Shell{"/bin/sh", Sh}, []string{"/bin/sh", "-c", script}},
		{Shell{"/usr/bin/zsh", Sh}, []string{"/usr/bin/zsh", "-c", script}},
		{Shell{`C:\Windows\System32\cmd.exe`, Cmd}, []string{`C:\Windows\System32\cmd.exe`, "/d", "/s", "/c", script}},
	}
	for _, tt := range tests {
		if got := tt.shell.Argv(script); !slices.Equal(got, tt.want) {
			t.Errorf("%v.Argv = %q, want %q", tt.shell, got, tt.want)
		}
	}
}

func TestArgvPowerShell(t *testing.T) {
	for _, script := range []string{"", "Get-ChildItem", `Write-Output "héllo 🌍" ; exit 3`} {
		argv := Shell{"pwsh.exe", PowerShell}.Argv(script)
		want := []string{"pwsh.exe", "-NoProfile", "-NonInteractive", "-EncodedCommand"}
		if len(argv) != 5 || !slices.Equal(argv[:4], want) {
			t.Fatalf("argv = %q", argv)
		}
		raw, err := base64.StdEncoding.DecodeString(argv[4])
		if err != nil || len(raw)%2 != 0 {
			t.Fatalf("bad base64 %q: %v", argv[4], err)
		}
		units := make([]uint16, len(raw)/2)
		for i := range units {
			units[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8 // little-endian
		}
		if got := string(utf16.Decode(units)); got != script {
			t.Errorf("decoded %q, want %q", got, script)
		}
	}
	// A known value: "dir" in UTF-16LE.
	if got := (Shell{"powershell.exe", PowerShell}).Argv("dir")[4]; got != "ZABpAHIA" {
		t.Errorf("dir encoded as %q, want ZABpAHIA", got)
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		program string
		want    Kind
	}{
		{"bash", Bash},
		{"/usr/local/bin/bash", Bash},
		{`C:\Program Files\Git\bin\bash.exe`, Bash},
		{"sh", Sh},
		{"/bin/dash", Sh},
		{"zsh", Sh},
		{"/usr/bin/fish-or-whatever", Sh},
		{"pwsh", PowerShell},
		{`C:\Program Files\PowerShell\7\pwsh.exe`, PowerShell},
		{"powershell.exe", PowerShell},
		{"PowerShell.EXE", PowerShell},
		{`C:\Windows\System32\cmd.exe`, Cmd},
		{"CMD.EXE", Cmd},
	}
	for _, tt := range tests {
		if got := KindOf(tt.program); got != tt.want {
			t.Errorf("KindOf(%q) = %q, want %q", tt.program, got, tt.want)
		}
	}
}

func TestDetect(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix shells")
	}
	def, err := Detect("")
	if err != nil {
		t.Fatal(err)
	}
	if bash, err := exec.LookPath("bash"); err == nil && (def.Path != bash || def.Kind != Bash) {
		t.Errorf("Detect(\"\") = %+v, want bash at %s", def, bash)
	}

	sh, err := Detect("/bin/sh")
	if err != nil || sh.Path != "/bin/sh" || sh.Kind != Sh {
		t.Errorf(`Detect("/bin/sh") = %+v, %v`, sh, err)
	}
	if bash, err := Detect("bash"); err != nil || bash.Kind != Bash || !filepath.IsAbs(bash.Path) {
		t.Errorf(`Detect("bash") = %+v, %v`, bash, err)
	}

	// An unknown shell by path is treated as sh-like.
	odd := filepath.Join(t.TempDir(), "myshell")
	if err := os.Symlink("/bin/sh", odd); err != nil {
		t.Fatal(err)
	}
	if got, err := Detect(odd); err != nil || got.Kind != Sh || got.Path != odd {
		t.Errorf("Detect(%q) = %+v, %v", odd, got, err)
	}

	if _, err := Detect("no-such-shell-xyz"); err == nil || !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing shell name: err = %v, want exec.ErrNotFound", err)
	}
	if _, err := Detect("/no/such/shell"); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing shell path: err = %v, want fs.ErrNotExist", err)
	}
	plain := filepath.Join(t.TempDir(), "notexec")
	os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644)
	if _, err := Detect(plain); err == nil || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("non-executable shell: err = %v, want fs.ErrPermission", err)
	}
}

// TestArgvRuns runs each available Unix shell with its argv and checks the script
// reaches it intact, quotes and all.
func TestArgvRuns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix shells")
	}
	script := `printf '%s|' "a b" 'c"d' $((1+2)); exit 7`
	for _, name := range []string{"bash", "sh", "dash", "zsh"} {
		sh, err := Detect(name)
		if err != nil {
			continue
		}
		argv := sh.Argv(script)
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 7 {
			t.Errorf("%s: err = %v, want exit 7", name, err)
		}
		if got, want := string(out), `a b|c"d|3|`; got != want {
			t.Errorf("%s: output %q, want %q", name, got, want)
		}
	}
}

// A script of MaxScript bytes really fits: the shell runs it.
func TestMaxScriptFits(t *testing.T) {
	sh, err := Detect("")
	if err != nil || sh.Kind == PowerShell || sh.Kind == Cmd {
		t.Skip("needs a POSIX shell")
	}
	script := "true " + strings.Repeat("x", sh.MaxScript()-5)
	if out, err := exec.Command(sh.Argv(script)[0], sh.Argv(script)[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%d-byte script: %v %s", len(script), err, out)
	}
	over := script + "x"
	if err := exec.Command(sh.Argv(over)[0], sh.Argv(over)[1:]...).Run(); err == nil && runtime.GOOS == "linux" {
		t.Errorf("%d bytes ran; MaxScript could be larger", len(over))
	}
}
