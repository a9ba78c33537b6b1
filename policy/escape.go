package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis/opts"

	"github.com/shellgate/shellgate/internal/analysis"
)

// escape asks before handing work to a daemon that runs it outside every sandbox.
func (x *check) escape(c *analysis.Command) {
	if c.Name == "git" {
		x.gitEscape(c)
		return
	}
	if (c.Name == "pre-commit" || c.Name == "prek") && len(c.Operands) > 0 && strings.HasPrefix(c.Args[c.Operands[0]], "install") {
		x.askWrite(filepath.Join(x.root, ".git", "hooks"), "`%s` installs git hooks, which run later outside any check (rule protected-paths): the user must approve it.", c.Source)
		return
	}
	if !escapeTools[c.Name] || infoOnly(c) {
		return
	}
	if _, reads := daemonReads.first(x, c); reads != "" {
		return
	}
	x.ask(RuleEscape, "`%s` hands work to %s, which runs it outside shellgate's sandbox (rule sandbox-escape): the user must approve it.", c.Source, c.Name)
}

// daemonReads are the commands of daemon clients that only read what the
// daemon knows (docker ps, launchctl print, crontab -l): they hand it no work.
var daemonReads = &catalogue{facts: []fact{
	fact{programs: []string{"docker", "podman", "nerdctl"}, test: containerReads,
		match: []string{"docker ps", "docker image ls", "docker compose ps", "docker compose -f x.yml logs web", "docker compose config",
			"docker compose ls", "docker compose images", "docker context show", "docker buildx du", "docker manifest inspect alpine",
			"docker trust inspect alpine", "docker --context=x ps", "docker -c x ps", "docker --log-level debug ps", "docker -l info compose -p x ps",
			"podman ps -a", "nerdctl -n k8s.io images"},
		notMatch: []string{"docker run alpine", "docker compose up", "docker compose -f x.yml exec web sh", "docker --context=evil run alpine",
			"docker -c x compose run web", "docker compose --project-directory ps up", "docker compose config -o ~/.bashrc",
			"docker -H tcp://x ps", "docker --config ./cfg ps", "DOCKER_CONFIG=./cfg docker compose ps", "docker buildx inspect --bootstrap",
			"docker context use evil", "docker manifest push x", "podman --runtime ./evil ps", "docker --log-level=debug compose --file x.yml run s"}},
	fact{programs: []string{"docker-compose", "podman-compose"},
		test: func(_ *check, c *analysis.Command) string {
			return when(composeReads(c.Args, c.Flags), "reads")
		},
		match:    []string{"docker-compose ps", "docker-compose -f x.yml logs", "podman-compose images"},
		notMatch: []string{"docker-compose up -d", "docker-compose -f ps run web", "docker-compose config --output x"}},
	fact{programs: []string{"launchctl"},
		test:     func(_ *check, c *analysis.Command) string { return when(readOnlyLaunchctl[subOf(c)], "reads") },
		match:    []string{"launchctl list", "launchctl print system", "launchctl getenv PATH", "launchctl print-disabled user/501"},
		notMatch: []string{"launchctl load x.plist", "launchctl setenv X y", "launchctl bootstrap gui/501 x.plist", "launchctl limit maxfiles 1 1"}},
	fact{programs: []string{"systemctl"},
		test: func(_ *check, c *analysis.Command) string {
			return when(subOf(c) == "" || readOnlySystemctl[subOf(c)], "reads")
		},
		match:    []string{"systemctl status nginx", "systemctl --user list-units", "systemctl is-active x", "systemctl --no-pager show x"},
		notMatch: []string{"systemctl --user start x", "systemctl --user enable --now x", "systemctl restart nginx", "systemctl --user link ./x.service", "systemctl edit x"}},
	fact{programs: []string{"crontab"},
		test:     func(_ *check, c *analysis.Command) string { return when(hasArg(c.Args, "-l"), "reads") },
		match:    []string{"crontab -l"},
		notMatch: []string{"crontab x.cron", "crontab -r"}},
}}

// dockerObjects are docker's management commands: docker OBJECT VERB.
var dockerObjects = map[string]bool{
	"image": true, "container": true, "volume": true, "network": true, "system": true, "context": true,
	"builder": true, "buildx": true, "plugin": true, "node": true, "service": true, "stack": true, "secret": true, "config": true,
}

// dockerReadVerbs are read-only verbs of docker's commands beyond
// readOnlyDocker: docker context show, docker buildx du, and the registry
// reads (the network rule judges those).
var dockerReadVerbs = map[string][]string{
	"context": {"show"}, "buildx": {"du"}, "manifest": {"inspect"}, "trust": {"inspect"},
}

// containerGlobalReads are the container clients' own options that leave a
// read a read: which context or namespace, how much to log, TLS files.
// Others point the client at another daemon (-H, --url), at plugins and
// helpers to run (--config, podman --runtime, --conmon, --hooks-dir), or
// are unknown.
var containerGlobalReads = []string{"c", "context", "connection", "l", "log-level", "D", "debug", "debug-full", "tls", "tlscacert",
	"tlscert", "tlskey", "tlsverify", "n", "namespace", "h", "help"}

// containerReads: docker, podman and nerdctl commands that only read.
func containerReads(_ *check, c *analysis.Command) string {
	for _, o := range c.Global {
		if !slices.Contains(containerGlobalReads, o.Name) {
			return ""
		}
	}
	sub, verb := c.Sub, subOf(c)
	switch {
	case sub == "" || c.Flags[c.SubAt]&analysis.ArgDynamic != 0:
		return ""
	case sub == "compose":
		// A plugin: found through DOCKER_CONFIG's cli-plugins.
		return when(!assigns(c, "DOCKER_CONFIG") && composeReads(c.Args[c.SubAt+1:], c.Flags[c.SubAt+1:]), "reads")
	case sub == "buildx" && (assigns(c, "DOCKER_CONFIG") || hasArg(c.Args, "--bootstrap")):
		return "" // a plugin; inspect --bootstrap starts a builder
	case readOnlyDocker[sub]:
		return "reads"
	case dockerObjects[sub] && readOnlyDocker[verb]:
		return "reads" // docker image ls, docker container inspect …
	}
	return when(slices.Contains(dockerReadVerbs[sub], verb), "reads")
}

// compose is the grammar of docker compose's own options, before its verb.
var compose = func() *opts.Spec {
	s := opts.New("f:p:", "all-resources", "ansi=", "compatibility", "dry-run", "env-file=", "file=", "help", "parallel=",
		"profile=", "progress=", "project-directory=", "project-name=", "version")
	s.InOrder, s.Exact = true, true
	return s
}()

// composeReads reports compose arguments (after docker compose, or
// docker-compose's) whose verb only reads: ps, logs, config without an
// output file, ls, images, top, port, version.
func composeReads(args []string, flags []analysis.ArgFlag) bool {
	r := compose.Parse(args, func(i int) bool { return flags[i]&analysis.ArgDynamic != 0 })
	if r.End >= len(args) || flags[r.End]&analysis.ArgDynamic != 0 {
		return false
	}
	switch verb, rest := args[r.End], args[r.End+1:]; verb {
	case "ps", "logs", "ls", "images", "top", "port", "version":
		return true
	case "config":
		return !slices.ContainsFunc(rest, func(a string) bool {
			return a == "-o" || strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")
		})
	}
	return false
}

// readOnlySystemctl are systemctl's commands that only report; the others
// start, stop, enable, link or edit units the service manager runs outside
// every sandbox.
var readOnlySystemctl = map[string]bool{"status": true, "show": true, "cat": true, "help": true, "list-units": true,
	"list-unit-files": true, "list-timers": true, "list-sockets": true, "list-jobs": true, "list-dependencies": true,
	"list-automounts": true, "list-paths": true, "list-machines": true, "is-active": true, "is-enabled": true, "is-failed": true,
	"is-system-running": true, "get-default": true, "show-environment": true}

var readOnlyLaunchctl = map[string]bool{"list": true, "print": true, "print-disabled": true, "print-cache": true, "blame": true,
	"version": true, "help": true, "managerpid": true, "manageruid": true, "managername": true, "getenv": true, "dumpstate": true,
	"hostinfo": true, "resolveport": true}

// gitEscape asks before git schedules itself or installs hooks that run later
// outside any check: git maintenance start|register, git lfs install.
func (x *check) gitEscape(c *analysis.Command) {
	if len(c.Operands) == 0 {
		return
	}
	switch op := c.Args[c.Operands[0]]; {
	case c.Sub == "maintenance" && (op == "start" || op == "register"):
		x.ask(RuleEscape, "`%s` schedules git to run in the background from the system's scheduler, outside shellgate (rule sandbox-escape): the user must approve it.", c.Source)
	case c.Sub == "lfs" && op == "install":
		x.askWrite(filepath.Join(x.root, ".git", "hooks"), "`%s` installs git hooks, which run later outside any check (rule protected-paths): the user must approve it.", c.Source)
	}
}
