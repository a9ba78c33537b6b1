package shell

import (
	"strings"
	"testing"
)

func TestIsSecret(t *testing.T) {
	tests := []struct {
		name   string
		secret bool
	}{
		// Well-known credentials.
		{"AWS_ACCESS_KEY_ID", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"AWS_SESSION_TOKEN", true},
		{"GITHUB_TOKEN", true},
		{"GH_TOKEN", true},
		{"OPENAI_API_KEY", true},
		{"ANTHROPIC_API_KEY", true},
		{"NPM_TOKEN", true},
		{"NODE_AUTH_TOKEN", true},
		{"PGPASSWORD", true},
		{"MYSQL_PWD", true},
		{"DB_PASS", true},
		{"DATABASE_URL", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"SSH_PRIVATE_KEY", true},
		{"GPG_PASSPHRASE", true},
		{"SESSION_COOKIE", true},
		{"HTTP_AUTHORIZATION", true},
		{"DOCKER_AUTH_CONFIG", true},
		{"DBUS_SESSION_BUS_ADDRESS", true},
		{"apiKey", true},
		{"stripe_secret", true},
		{"MY_APIKEY", true},
		// Look secret by substring, are not.
		{"KEYBOARD_LAYOUT", false},
		{"XKB_KEYMAP", false},
		{"GIT_AUTHOR_NAME", false},
		{"GIT_AUTHOR_EMAIL", false},
		{"XAUTHORITY", false},
		{"TOKENIZERS_PARALLELISM", false},
		{"SSH_AUTH_SOCK", false},
		{"XDG_SESSION_TYPE", false},
		{"XDG_SESSION_ID", false},
		{"DESKTOP_SESSION", false},
		{"PWD", false},
		{"OLDPWD", false},
		// Ordinary.
		{"PATH", false},
		{"HOME", false},
		{"LANG", false},
		{"GOPATH", false},
		{"TERM", false},
		{"MYCODEAGENT", false},
	}
	for _, tt := range tests {
		if got := IsSecret(tt.name); got != tt.secret {
			t.Errorf("IsSecret(%q) = %v, want %v", tt.name, got, tt.secret)
		}
	}
}

func TestIsHijack(t *testing.T) {
	for _, name := range []string{"BASH_ENV", "ENV", "BASH_FUNC_ls%%", "BASH_FUNC_echo()", "PROMPT_COMMAND",
		"SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "PS4", "IFS"} {
		if !IsHijack(name) {
			t.Errorf("IsHijack(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"PATH", "ENVIRONMENT", "BASH", "HOME", "MY_ENV"} {
		if IsHijack(name) {
			t.Errorf("IsHijack(%q) = true, want false", name)
		}
	}
}

// Names and values issue 10 lists: each is stripped by name or by the shape of
// its value.
func TestSecretCoverage(t *testing.T) {
	for _, name := range []string{"GH_PAT", "GITHUB_PAT", "MY_TEAM_PAT", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK_URL", "TEAMS_WEBHOOK_URL",
		"SENTRY_DSN", "DATADOG_DSN", "npm_config__authToken", "NPM_CONFIG__AUTHTOKEN", "registry_authToken", "NPM_TOKEN"} {
		if !IsSecret(name) {
			t.Errorf("IsSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"PATTERN", "PATH", "DSNAME", "PATCH_LEVEL", "HOME"} {
		if IsSecret(name) {
			t.Errorf("IsSecret(%q) = true", name)
		}
	}
	for _, v := range []string{
		"sk-proj-abcdefghijklmnopqrstuvwxyz0123",
		"sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
		"ghp_0123456789abcdefghijklmnopqrstuvwxyz",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"xoxb-123456789012-1234567890123-abcdefghijklmnop",
		"xoxp-123456789012-1234567890123-abcdefghijklmnop",
		"xoxe-1-abcdefghijklmnopqrstuvwxyz",
		"xapp-1-A0123456789-0123456789-abcdef",
		"AKIAIOSFODNN7EXAMPLE",
		"ASIAIOSFODNN7EXAMPLE",
		"glpat-abcdefghijklmnopqrst",
		"npm_abcdefghijklmnopqrstuvwxyz012345",
	} {
		if !LooksLikeKey(v) {
			t.Errorf("LooksLikeKey(%q) = false", v)
		}
	}
	for _, v := range []string{"sk-short", "skeleton-abcdefghijklmnopqrstu", "AKIA", "xoxb-", "/usr/local/bin:/usr/bin", "ghp_with spaces in it here"} {
		if LooksLikeKey(v) {
			t.Errorf("LooksLikeKey(%q) = true", v)
		}
	}
}

// Secrets returns what Env strips as secret, for redaction: long enough values only,
// not the variables kept on request, not the hijacking ones.
func TestSecrets(t *testing.T) {
	base := []string{
		"GITHUB_TOKEN=ghp_0123456789abcdefghijklmnop",
		"DB_PASS=hunter2hunter2",
		"SHORT_TOKEN=abc", // too short to redact: "abc" is everywhere
		"NOTE=sk-abcdefghijklmnop1234",
		"REDIS_URL=redis://u:longpassword@host:6379",
		"KEPT_TOKEN=keep-me-please",
		"BASH_ENV=/tmp/evil-startup-file",
		"PATH=/usr/local/bin:/usr/bin",
		"HOME=/home/someone",
	}
	got := Secrets(base, EnvOptions{KeepSecrets: []string{"KEPT_TOKEN"}})
	want := map[string]string{
		"GITHUB_TOKEN": "ghp_0123456789abcdefghijklmnop",
		"DB_PASS":      "hunter2hunter2",
		"NOTE":         "sk-abcdefghijklmnop1234",
		"REDIS_URL":    "redis://u:longpassword@host:6379",
	}
	if len(got) != len(want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Secrets[%s] = %q, want %q", k, got[k], v)
		}
	}
	env := strings.Join(Env(base, EnvOptions{KeepSecrets: []string{"KEPT_TOKEN"}}), "\n")
	for k := range got {
		if strings.Contains(env, k+"=") {
			t.Errorf("%s is in Secrets but Env keeps it", k)
		}
	}
	if s := Secrets(base, EnvOptions{KeepAllSecrets: true}); s != nil {
		t.Errorf("KeepAllSecrets: Secrets = %q", s)
	}
}
