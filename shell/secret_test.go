package shell

import "testing"

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
