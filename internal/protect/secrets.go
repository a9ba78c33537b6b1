package protect

import (
	"path/filepath"
	"slices"
	"strings"
)

// secrets are the home's files and directories that hold credentials, relative
// to the home: the sandbox shows them empty, and the policy asks before an
// unconfined command reads one.
var secrets = []string{
	".ssh", ".aws", ".gnupg", ".config/gh", ".netrc", ".docker/config.json", ".kube",
	".config/gcloud", ".azure", ".npmrc", ".pypirc", ".git-credentials", ".config/git/credentials",
	".cargo/credentials", ".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json",
	".password-store", ".local/share/keyrings", ".vault-token", ".config/op",
	".mozilla", ".config/google-chrome", ".config/chromium",
	// Inside toolchains the sandbox shows whole: uv's credential store (`uv
	// auth login`), the global npmrc of a user prefix (`npm config set
	// --global` with prefix ~/.npm-global), .NET's certificate store (the
	// private keys of `dotnet dev-certs`).
	".local/share/uv/credentials", ".npm-global/etc/npmrc", ".dotnet/corefx/cryptography/x509stores",
}

// unshown are credentials that the sandbox hides without naming them, since
// its home shows the toolchains and their settings and nothing else: the
// agents' own tokens, other tools' config that holds one, shell histories
// (where pasted tokens stay). Only the policy needs them named, to ask
// before an unconfined command reads one (Unshown).
var unshown = []string{
	".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".config/rclone",
	".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history", ".psql_history", ".mysql_history",
}

// Unshown returns the unshown credentials' table, relative to the home: what
// an unconfined command asks before reading besides Secrets.
func Unshown() []string { return slices.Clone(unshown) }

// Secrets returns the secrets' table, relative to the home: a copy, so that
// no caller can change what every session hides.
func Secrets() []string { return slices.Clone(secrets) }

// SecretPaths are the absolute paths of Secrets and more (the user's own):
// relative to home unless absolute, "~/" standing for home.
func SecretPaths(home string, more []string) []string {
	var out []string
	for _, h := range append(Secrets(), more...) {
		if rest, ok := strings.CutPrefix(h, "~/"); ok {
			h = filepath.Join(home, rest)
		} else if !filepath.IsAbs(h) {
			h = filepath.Join(home, h)
		}
		out = append(out, h)
	}
	return out
}
