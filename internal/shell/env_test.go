package shell

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// lookup returns the value of name in env, and whether it is present.
func lookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v, true
		}
	}
	return "", false
}

func TestEnvStripsAndForces(t *testing.T) {
	base := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/home/u",
		"GITHUB_TOKEN=ghp_x",
		"OPENAI_API_KEY=sk-x",
		"SSH_AUTH_SOCK=/tmp/agent.sock",
		"GIT_AUTHOR_NAME=Ann",
		"BASH_ENV=/tmp/evil.sh",
		"ENV=/tmp/evil.sh",
		"BASH_FUNC_ls%%=() { rm -rf ~; }",
		"PROMPT_COMMAND=curl evil",
		"SHELLOPTS=xtrace",
		"CDPATH=/etc",
		"REDIS_URL=redis://user:hunter2@cache:6379/0",
		"SERVICE_URL=https://example.com/api",
		"PAGER=less",
		"TERM=xterm-256color",
		"NOEQUALS",
	}
	env := Env(base, EnvOptions{})
	tests := []struct {
		name    string
		want    string
		present bool
	}{
		{"PATH", "/usr/bin:/bin", true},
		{"HOME", "/home/u", true},
		{"SSH_AUTH_SOCK", "/tmp/agent.sock", true},
		{"GIT_AUTHOR_NAME", "Ann", true},
		{"SERVICE_URL", "https://example.com/api", true},
		{"GITHUB_TOKEN", "", false},
		{"OPENAI_API_KEY", "", false},
		{"BASH_ENV", "", false},
		{"ENV", "", false},
		{"BASH_FUNC_ls%%", "", false},
		{"PROMPT_COMMAND", "", false},
		{"SHELLOPTS", "", false},
		{"CDPATH", "", false},
		{"REDIS_URL", "", false},
		{"NOEQUALS", "", false},
		{"SHELLGATE", "1", true},
		{"PAGER", "cat", true},
		{"GIT_PAGER", "cat", true},
		{"GIT_TERMINAL_PROMPT", "0", true},
		{"GIT_EDITOR", "true", true},
		{"DEBIAN_FRONTEND", "noninteractive", true},
		{"TERM", "dumb", true},
		{"NO_COLOR", "1", true},
	}
	for _, tt := range tests {
		got, ok := lookup(env, tt.name)
		if ok != tt.present || got != tt.want {
			t.Errorf("%s: got %q (present %v), want %q (present %v)", tt.name, got, ok, tt.want, tt.present)
		}
	}
	// Each name once: a forced value replaces the inherited one in place.
	seen := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if seen[name] {
			t.Errorf("%s appears twice in %q", name, env)
		}
		seen[name] = true
	}
}

func TestEnvOptions(t *testing.T) {
	base := []string{"GITHUB_TOKEN=ghp_x", "NPM_TOKEN=npm_x", "BASH_ENV=/evil", "A=1"}
	tests := []struct {
		name string
		opts EnvOptions
		want map[string]string // "" value: absent
	}{
		{"default", EnvOptions{},
			map[string]string{"GITHUB_TOKEN": "", "NPM_TOKEN": "", "A": "1"}},
		{"keep one", EnvOptions{KeepSecrets: []string{"GITHUB_TOKEN"}},
			map[string]string{"GITHUB_TOKEN": "ghp_x", "NPM_TOKEN": ""}},
		{"keep is case-sensitive on Unix", EnvOptions{KeepSecrets: []string{"github_token"}},
			map[string]string{"GITHUB_TOKEN": ""}},
		{"keep all", EnvOptions{KeepAllSecrets: true},
			map[string]string{"GITHUB_TOKEN": "ghp_x", "NPM_TOKEN": "npm_x", "BASH_ENV": ""}},
		{"extra wins", EnvOptions{Extra: map[string]string{"MYCODEAGENT": "1", "PAGER": "less", "A": "2"}},
			map[string]string{"MYCODEAGENT": "1", "PAGER": "less", "A": "2"}},
		{"extra may set what is stripped", EnvOptions{Extra: map[string]string{"GITHUB_TOKEN": "mine"}},
			map[string]string{"GITHUB_TOKEN": "mine"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := buildEnv(base, tt.opts, false)
			for name, want := range tt.want {
				got, ok := lookup(env, name)
				if want == "" && ok {
					t.Errorf("%s = %q, want it stripped", name, got)
				} else if want != "" && got != want {
					t.Errorf("%s = %q (present %v), want %q", name, got, ok, want)
				}
			}
		})
	}
}

func TestEnvWindowsCaseInsensitive(t *testing.T) {
	base := []string{
		`=C:=C:\work`,
		`Path=C:\Windows`,
		`github_token=x`,
		`Pager=more`,
		`bash_env=C:\evil.sh`,
		`Api_Key=y`,
	}
	env := buildEnv(base, EnvOptions{
		KeepSecrets: []string{"API_KEY"},
		Extra:       map[string]string{"PATH": `C:\bin`},
	}, true)
	want := []string{
		`=C:=C:\work`,
		`PATH=C:\bin`,
		`PAGER=cat`,
		`Api_Key=y`,
	}
	for _, kv := range want {
		if !slices.Contains(env, kv) {
			t.Errorf("missing %q in %q", kv, env)
		}
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv[1:], "=")
		switch strings.ToUpper(kv[:1] + name) {
		case "GITHUB_TOKEN", "BASH_ENV":
			t.Errorf("%q not stripped", kv)
		}
	}
	count := 0
	for _, kv := range env {
		if strings.HasPrefix(strings.ToUpper(kv), "PATH=") {
			count++
		}
	}
	if count != 1 {
		t.Errorf("PATH appears %d times in %q, want once", count, env)
	}
}

// A credential in a field of the value goes whatever the variable is called:
// connection strings (.NET's ConnectionStrings__X, Azure's), JDBC and libpq
// URLs with the password in the query, an Azure SAS URL.
func TestHasFieldPassword(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  bool
	}{
		{"Server=db;Database=app;User Id=sa;Password=s3cret;", true},
		{"Driver={ODBC};Server=db;UID=sa;PWD=s3cret", true},
		{"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==;EndpointSuffix=core.windows.net", true},
		{"Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc=", true},
		{"jdbc:postgresql://db:5432/app?user=app&password=s3cret", true},
		{"postgresql://app@db/app?sslmode=require&password=s3cret", true},
		{"https://a.blob.core.windows.net/c?sv=2022-11-02&sig=abc%3D", true},
		{"-Djavax.net.ssl.trustStorePassword=changeit", true},
		{"https://maps.example/api?key=AIzaXYZ", true},
		{"Server=db;Database=app;Password=", false},
		{"rs=0:di=01;34:ln=01;36:mh=00", false},
		{"https://example.com/search?q=a&page=2", false},
		{"-tags=netgo -ldflags=-s", false},
		{"/usr/local/bin:/usr/bin", false},
	} {
		if got := hasFieldPassword(tt.value); got != tt.want {
			t.Errorf("hasFieldPassword(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
	env := Env([]string{"PATH=/usr/bin", "AZURE_STORAGE_CONNECTION_STRING=AccountName=a;AccountKey=abcdefgh==", "ConnectionStrings__Default=Server=db;Password=s3cretpw"}, EnvOptions{})
	for _, name := range []string{"AZURE_STORAGE_CONNECTION_STRING", "ConnectionStrings__Default"} {
		if _, ok := lookup(env, name); ok {
			t.Errorf("%s reaches the command", name)
		}
	}
	if _, ok := lookup(env, "PATH"); !ok {
		t.Error("PATH went")
	}
}

func TestHasURLPassword(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"postgres://app:s3cret@db:5432/app", true},
		{"redis://:s3cret@cache:6379", true},
		{"https://user@example.com/", false},
		{"https://example.com/path?x=a:b@c", false},
		{"/usr/bin", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := hasURLPassword(tt.value); got != tt.want {
			t.Errorf("hasURLPassword(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// TestEnvInRealShell checks that a real bash started with Env sees the forced
// variables and none of the stripped ones, and that BASH_ENV in the parent's
// environment no longer runs code.
func TestEnvInRealShell(t *testing.T) {
	sh, err := Detect("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	dir := t.TempDir()
	evil := dir + "/evil.sh"
	if err := os.WriteFile(evil, []byte("echo HIJACKED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := append(os.Environ(), "BASH_ENV="+evil, "GITHUB_TOKEN=ghp_secret", "BASH_FUNC_true%%=() { echo HIJACKED; }")
	argv := sh.Argv(`true; echo "$SHELLGATE $PAGER ${GITHUB_TOKEN-unset}"`)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = Env(base, EnvOptions{})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, want := string(out), "1 cat unset\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// TestIssue10SecretNames: the names and values an adversarial review found
// passing through (issue 10).
func TestIssue10SecretNames(t *testing.T) {
	for _, name := range []string{"GH_PAT", "GITLAB_PAT", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "SENTRY_DSN", "NPM_TOKEN", "npm_config__authToken", "AWS_SECRET_ACCESS_KEY"} {
		if !IsSecret(name) {
			t.Errorf("IsSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"PATH", "PATTERN", "DSN_COUNT", "GOPATH", "HOME"} {
		if IsSecret(name) {
			t.Errorf("IsSecret(%q) = true", name)
		}
	}
	env := Env([]string{"MY_VAR=sk-abcdefghijklmnop1234", "OTHER=ghp_0123456789abcdefABCDEF", "ID=AKIAABCDEFGHIJKLMNOP", "NOTE=sk-short", "X=1"}, EnvOptions{})
	got := strings.Join(env, " ")
	for _, bad := range []string{"MY_VAR=", "OTHER=", "ID="} {
		if strings.Contains(got, bad) {
			t.Errorf("%s kept: %s", bad, got)
		}
	}
	if !strings.Contains(got, "NOTE=sk-short") || !strings.Contains(got, "X=1") {
		t.Errorf("ordinary values stripped: %s", got)
	}
}
