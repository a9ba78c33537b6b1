package shell

import (
	"maps"
	"runtime"
	"slices"
	"strings"
)

// EnvOptions adjusts the environment built by Env.
type EnvOptions struct {
	// Extra holds user-configured variables (e.g. MYCODEAGENT=1). They are applied
	// last, so they win over everything, including the variables Env sets itself.
	Extra map[string]string
	// KeepSecrets names variables allowed through even though they look secret.
	KeepSecrets []string
	// KeepAllSecrets turns secret stripping off. Shell-hijacking variables
	// (BASH_ENV, BASH_FUNC_*, …) are still removed.
	KeepAllSecrets bool
}

// forced is what Env sets in every command's environment, after stripping and
// before Extra. Each value makes a tool that would wait for a person fail or
// proceed instead:
//
//   - PAGER, GIT_PAGER=cat: output is never held in a pager.
//   - GIT_TERMINAL_PROMPT=0: git fails instead of asking for credentials.
//   - GIT_EDITOR, EDITOR, VISUAL=true: anything that opens an editor accepts the text
//     it prepared unchanged. git merge, git commit --amend and git rebase --continue
//     keep their default message; a plain `git commit` without -m stops at once with
//     "Aborting commit due to empty commit message."
//   - DEBIAN_FRONTEND=noninteractive: apt and dpkg take default answers.
//   - TERM=dumb, NO_COLOR=1: no cursor control or colour codes in captured output.
//   - SHELLGATE=1: a command can tell it runs under shellgate.
var forced = []string{
	"SHELLGATE=1",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_EDITOR=true",
	"EDITOR=true",
	"VISUAL=true",
	"DEBIAN_FRONTEND=noninteractive",
	"TERM=dumb",
	"NO_COLOR=1",
}

// Env builds a command's environment from base (usually os.Environ()): base minus
// secret-looking variables (see IsSecret and below) and minus variables that make a
// shell run code before the command (see IsHijack), then forced, then o.Extra.
//
// Besides the names IsSecret reports, a variable whose value is a URL with a password
// in it (scheme://user:password@host) is stripped, e.g. REDIS_URL, and so is one
// whose value looks like a key (LooksLikeKey: sk-…, ghp_…, xoxb-…, AKIA…), or holds
// one as a field of a connection string or a URL's query (hasFieldPassword:
// Password=…, AccountKey=…, ?password=…, &sig=…).
//
// On Windows variable names are case-insensitive: "Path" and "PATH" are one
// variable, and the later setting replaces the earlier one in place.
func Env(base []string, o EnvOptions) []string {
	return buildEnv(base, o, runtime.GOOS == "windows")
}

func buildEnv(base []string, o EnvOptions, foldCase bool) []string {
	key, keep := keys(o, foldCase)

	env := make([]string, 0, len(base)+len(forced)+len(o.Extra))
	index := make(map[string]int, cap(env)) // key → position in env
	set := func(kv string) {
		k := key(nameOf(kv))
		if i, ok := index[k]; ok {
			env[i] = kv
			return
		}
		index[k] = len(env)
		env = append(env, kv)
	}

	for _, kv := range base {
		name := nameOf(kv)
		if name == "" || IsHijack(key(name)) || stripped(kv, name, o, keep[key(name)]) {
			continue
		}
		set(kv)
	}
	for _, kv := range forced {
		set(kv)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Extra)) {
		set(name + "=" + o.Extra[name])
	}
	return env
}

// stripped reports whether Env leaves out the variable kv, named name, as a secret.
func stripped(kv, name string, o EnvOptions, kept bool) bool {
	if o.KeepAllSecrets || kept {
		return false
	}
	value := kv[len(name)+1:]
	return IsSecret(name) || hasURLPassword(value) || hasFieldPassword(value) || LooksLikeKey(value)
}

// MinRedacted is the length from which a stripped secret's value is redacted from
// output (see Secrets): shorter values ("1", "true", "dev") would hit ordinary text.
const MinRedacted = 8

// Secrets returns the variables of base that Env strips as secrets (not the
// shell-hijacking ones), name → value, leaving out values shorter than MinRedacted:
// the values to redact if a command prints them anyway, say by reading them from a
// file. nil when there are none.
func Secrets(base []string, o EnvOptions) map[string]string {
	return secrets(base, o, runtime.GOOS == "windows")
}

func secrets(base []string, o EnvOptions, foldCase bool) map[string]string {
	key, keep := keys(o, foldCase)
	var found map[string]string
	for _, kv := range base {
		name := nameOf(kv)
		if name == "" || len(kv)-len(name)-1 < MinRedacted || IsHijack(key(name)) || !stripped(kv, name, o, keep[key(name)]) {
			continue
		}
		if found == nil {
			found = map[string]string{}
		}
		found[name] = kv[len(name)+1:]
	}
	return found
}

// keys returns how variable names compare (case-insensitively on Windows) and the
// set of o.KeepSecrets so compared.
func keys(o EnvOptions, foldCase bool) (func(string) string, map[string]bool) {
	key := func(name string) string {
		if foldCase {
			return strings.ToUpper(name)
		}
		return name
	}
	keep := make(map[string]bool, len(o.KeepSecrets))
	for _, name := range o.KeepSecrets {
		keep[key(name)] = true
	}
	return key, keep
}

// nameOf returns the name of a NAME=value entry, or "" if it has no '='. A leading
// '=' belongs to the name: Windows keeps per-drive directories as "=C:=C:\dir".
func nameOf(kv string) string {
	i := strings.IndexByte(kv[min(1, len(kv)):], '=')
	if i < 0 {
		return ""
	}
	return kv[:i+min(1, len(kv))]
}

// credentialFields name the fields of a connection string or a URL's query
// that hold a credential (compared lower-case, spaces dropped): ADO.NET's and
// ODBC's Password= and Pwd=, Azure's AccountKey=, SharedAccessKey= and a SAS
// URL's sig=, libpq's and JDBC's ?password=, an API's ?key= or ?token=.
var credentialFields = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true, "userpassword": true,
	"accountkey": true, "sharedaccesskey": true, "sharedaccesssignature": true, "sig": true,
	"key": true, "apikey": true, "api_key": true, "token": true, "access_token": true, "accesstoken": true,
	"secret": true, "client_secret": true, "clientsecret": true, "auth": true, "private_key": true,
}

// hasFieldPassword reports whether value holds a credential as a field of a
// connection string (`Server=db;Password=…`,
// `AccountName=a;AccountKey=…`) or of a URL's query
// (`jdbc:postgresql://db/app?user=u&password=…`, `…?sv=…&sig=…`): the
// variable's name need not say so (AZURE_STORAGE_CONNECTION_STRING,
// ConnectionStrings__Default, SPRING_DATASOURCE_URL).
func hasFieldPassword(value string) bool {
	for _, f := range strings.FieldsFunc(value, func(r rune) bool { return r == ';' || r == '&' || r == '?' }) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		k = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(k), " ", ""))
		if credentialFields[k] || strings.HasSuffix(k, "password") {
			return true
		}
	}
	return false
}

// hasURLPassword reports whether value looks like scheme://user:password@host.
func hasURLPassword(value string) bool {
	_, rest, ok := strings.Cut(value, "://")
	if !ok {
		return false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	if !ok {
		return false
	}
	_, password, ok := strings.Cut(userinfo, ":")
	return ok && password != ""
}
