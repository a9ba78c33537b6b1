package audit

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/corpus"
)

const (
	openAIKey = "sk-proj-Ab3dEf6hIj9kLm2nOp5q"
	githubPAT = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	slackBot  = "xoxb-123456789012-abcdefghijklmnop"
	awsKeyID  = "AKIAIOSFODNN7EXAMPLE"
	jwt       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		// Nothing secret: unchanged, byte for byte.
		{"go test ./...", "go test ./..."},
		{`grep -rn "author: x" .`, `grep -rn "author: x" .`},
		{"git log --author=me --format='%an: %s'", "git log --author=me --format='%an: %s'"},
		{"KEYBOARD=us make", "KEYBOARD=us make"},
		{"curl https://example.com:8443/path", "curl https://example.com:8443/path"},
		{"ssh -i ~/.ssh/id_ed25519 host", "ssh -i ~/.ssh/id_ed25519 host"},
		{"sort -u names.txt", "sort -u names.txt"},
		{"git add -u", "git add -u"},

		// Secret-named assignments and options.
		{"GITHUB_TOKEN=abc123 gh pr list", "GITHUB_TOKEN=[REDACTED] gh pr list"},
		{"export OPENAI_API_KEY='my key'; python x.py", "export OPENAI_API_KEY=[REDACTED]; python x.py"},
		{`env DB_PASS="p w" ./migrate`, `env DB_PASS=[REDACTED] ./migrate`},
		{"mysql --password=hunter2 -u root db", "mysql --password=[REDACTED] -u root db"},
		{"vault login --token s.abcdef && ls", "vault login --token [REDACTED] && ls"},
		{"tool --api-key=k1 --verbose", "tool --api-key=[REDACTED] --verbose"},
		{"tool --private --verbose", "tool --private --verbose"}, // a switch, no value
		{`echo "TOKEN=abc" > .env`, `echo "TOKEN=[REDACTED]" > .env`},
		{"curl 'https://api.x.com/v1?access_token=abc&page=2'", "curl 'https://api.x.com/v1?access_token=[REDACTED]&page=2'"},
		// Where a secret is kept, and a reference to one, are worth keeping.
		{"tool --key-file=/etc/k.pem --token-path x", "tool --key-file=/etc/k.pem --token-path x"},
		{`gh auth login --token "$GH_TOKEN"`, `gh auth login --token "$GH_TOKEN"`},
		{"API_KEY=$(cat key.txt) ./run", "API_KEY=$(cat key.txt) ./run"},

		// Headers.
		{`curl -H "Authorization: Bearer abc.def" https://x`, `curl -H "Authorization: Bearer [REDACTED]" https://x`},
		{`curl -H 'authorization: Basic dXNlcjpwYXNz' https://x`, `curl -H 'authorization: Basic [REDACTED]' https://x`},
		{`curl -H "X-Api-Key: k-123" -H "Accept: text/plain" x`, `curl -H "X-Api-Key: [REDACTED]" -H "Accept: text/plain" x`},
		{`curl -b "Cookie: sid=1; t=2" x`, `curl -b "Cookie: [REDACTED]" x`},

		// JSON bodies, plain and inside a double-quoted word.
		{`curl -d '{"user":"me","password":"hunter2"}' x`, `curl -d '{"user":"me","password":"[REDACTED]"}' x`},
		{`curl -d "{\"client_secret\":\"s3\",\"n\":1}" x`, `curl -d "{\"client_secret\":\"[REDACTED]\",\"n\":1}" x`},
		{`echo '{"pin": 1234, "token": 99}'`, `echo '{"pin": 1234, "token": [REDACTED]}'`},

		// Values shaped like keys, whatever they are called.
		{"echo " + openAIKey, "echo [REDACTED]"},
		{"git clone https://" + githubPAT + "@github.com/o/r", "git clone https://[REDACTED]@github.com/o/r"},
		{"X=" + slackBot + " ./notify", "X=[REDACTED] ./notify"},
		{"aws configure set aws_access_key_id " + awsKeyID, "aws configure set aws_access_key_id [REDACTED]"},
		{"curl -H 'X: " + jwt + "' x", "curl -H 'X: [REDACTED]' x"},

		// URL and curl passwords.
		{"psql postgres://admin:s3cret@db:5432/app", "psql postgres://admin:[REDACTED]@db:5432/app"},
		{"git push https://user:pa55@git.example.com/r.git", "git push https://user:[REDACTED]@git.example.com/r.git"},
		{"curl -u alice:wonder https://x", "curl -u alice:[REDACTED] https://x"},
		{"curl --user=alice:wonder https://x", "curl --user=alice:[REDACTED] https://x"},

		// A private key block.
		{"printf '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz\n-----END OPENSSH PRIVATE KEY-----\n' > k",
			"printf '-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----\n' > k"},

		// A YAML-ish line in a heredoc.
		{"cat > c.yml <<EOF\npassword: hunter2\nuser: me\nEOF", "cat > c.yml <<EOF\npassword: [REDACTED]\nuser: me\nEOF"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if got := Redact(Redact(tt.in)); got != tt.want {
			t.Errorf("Redact is not idempotent on %q: %q", tt.in, got)
		}
	}
}

// However a secret is written, the secret itself is gone.
func TestRedactLeavesNoSecret(t *testing.T) {
	secrets := []string{openAIKey, githubPAT, slackBot, awsKeyID, jwt}
	forms := []string{
		"echo %s", "export K=%s", "curl -H 'Authorization: Bearer %s' x", `curl -d '{"a":"%s"}' x`,
		"echo %s | base64", "A=1 B=%s C=3 make", "git remote add o https://x:%s@h/r", "f(){ echo \"%s\"; }; f",
		"cat <<EOF\n%s\nEOF", "tool --token=%s", "python3 -c 'print(\"%s\")'",
	}
	for _, s := range secrets {
		for _, f := range forms {
			in := strings.ReplaceAll(f, "%s", s)
			if got := Redact(in); strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q: the secret is still there", in, got)
			}
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add(`curl -H "Authorization: Bearer x" -d '{"password":"p"}' https://u:p@h?token=t&a=b`)
	f.Add("X=\"\\\"")
	f.Fuzz(func(t *testing.T, s string) {
		got := Redact(s)
		if strings.Count(got, Redacted) == 0 && got != s {
			t.Fatalf("Redact changed %q without redacting: %q", s, got)
		}
	})
}

// Redact skips the patterns only where none could match: on every command of
// the corpus and of TestRedact it gives what running them all gives.
func TestRedactSkipsOnlyWhatCannotMatch(t *testing.T) {
	var commands []string
	for _, name := range []string{"legit.tsv", "attacks.tsv", "attacks-review.tsv"} {
		for _, row := range corpus.Read(t, name) {
			commands = append(commands, row.Command())
		}
	}
	commands = append(commands, "echo "+openAIKey, "x "+jwt[:20]+"."+jwt[21:40], "curl -U a:b x", "p --user=a:b",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----")
	skipped := 0
	for _, c := range commands {
		if got, want := Redact(c), redact(c); got != want {
			t.Errorf("Redact(%q) = %q, want %q", c, got, want)
		}
		if !maySecret(c) {
			skipped++
		}
	}
	if skipped == 0 {
		t.Error("no command skipped the patterns")
	}
	for _, c := range []string{"echo hi", "git status", "ls -la", "go test ./...", "npm test"} {
		if maySecret(c) {
			t.Errorf("%q runs the patterns", c)
		}
	}
}
