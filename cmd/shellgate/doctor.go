package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// cmdDoctor says what this machine's kernel gives the sandbox, by starting a
// session as `run` would and reporting each layer, and why one is missing.
func cmdDoctor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var cf commonFlags // as run's, but no command of the user's is judged: no --mode
	cf.registerFiles(fs)
	cf.registerSandbox(fs)
	cf.registerCheckpoints(fs)
	plan := fs.Bool("plan", false, "print the steps that build the Linux sandbox's view of the filesystem, and exit")
	head := func(w io.Writer) {
		fmt.Fprint(w, "Usage: shellgate doctor [flags]\n\nStarts a sandbox session as `shellgate run` would and says which layers this\nmachine's kernel gives it, and why any is missing. Exits 0 when every layer applies\n(1 when not, or when the root refuses every command; 125 when the configuration\ncannot be read). With --plan, prints the view the sandbox builds instead: every\npath a command sees.\n\nFlags:\n")
	}
	if help, err := parseFlags(fs, args, head, stdout); help {
		return 0
	} else if err != nil {
		return usageFailure(stderr, "doctor", err.Error())
	}
	cfg, _, err := cf.config(stderr)
	var usage *usageError
	if errors.As(err, &usage) {
		return usageFailure(stderr, "doctor", err.Error())
	}
	if err != nil { // a configuration file: not what doctor -h would help with
		fmt.Fprintf(stderr, "shellgate doctor: %v\n", err)
		return exitShellgate
	}
	if *plan {
		g, err := shellgate.New(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "shellgate doctor: %v\n", err)
			return exitShellgate
		}
		defer g.Close()
		fmt.Fprintln(stdout, "# The sandbox's view, built on an empty root; nothing else of the host is there.")
		for _, s := range g.SandboxPlan() {
			fmt.Fprintln(stdout, s)
		}
		for _, r := range g.RefusedCaches() {
			fmt.Fprintln(stdout, "# not a tool cache, not shown: "+r)
		}
		return 0
	}
	fmt.Fprintf(stdout, "system:   %s/%s\n", runtime.GOOS, runtime.GOARCH)
	if info, ok := debug.ReadBuildInfo(); ok {
		if note := cgoNote(info, runtime.GOOS+"/"+runtime.GOARCH); note != "" {
			fmt.Fprintf(stdout, "build:    %s\n", note)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		fmt.Fprintf(stdout, "kernel:   %s\n", strings.TrimSpace(string(b)))
	}
	fmt.Fprintf(stdout, "undo:     %s\n", checkpointsLine(cfg))
	g, err := shellgate.New(cfg)
	if err != nil {
		fmt.Fprintf(stdout, "sandbox:  cannot tell: %v\n", err)
		return 1
	}
	ok := 0 // doctor's status when every layer applies
	if problem := g.RootProblem(); problem != nil {
		// Every command here is refused; the sandbox is the machine's, so
		// it is probed as without checkpoints (its probe takes none).
		fmt.Fprintf(stdout, "root:     every command is refused: %v\n", problem)
		ok = 1
		g.Close()
		cfg.Checkpoints.Off = true
		if g, err = shellgate.New(cfg); err != nil {
			fmt.Fprintf(stdout, "sandbox:  cannot tell: %v\n", err)
			return 1
		}
	}
	defer g.Close()
	env := g.Run(context.Background(), shellgate.Request{Command: "true"})
	switch s := env.Context.Sandbox.(type) {
	case string:
		fmt.Fprintf(stdout, "sandbox:  %s (mode %s, profile %s)\n", s, orDefault(string(cfg.Sandbox.Mode), "auto"), orDefault(string(cfg.Sandbox.Profile), "workspace-write"))
		if s == "off" && cfg.Sandbox.Mode != sandbox.Off && cfg.Sandbox.Profile != sandbox.FullAccess {
			if runtime.GOOS == "darwin" {
				fmt.Fprintf(stdout, "          no %s on this system: commands run under the policy alone\n", sandbox.SandboxExec)
			} else {
				fmt.Fprintln(stdout, "          no sandbox on this system: commands run under the policy alone")
			}
		}
		return ok
	case map[string]any:
		missing, _ := s["missing"].([]string)
		by := sandboxMechanism[runtime.GOOS]
		if runtime.GOOS == "linux" && len(missing) > 0 && strings.HasPrefix(missing[0], sandbox.LayerUserNS+":") {
			by = "each command started through shellgate again, which restricts itself (no user namespaces here)"
		}
		fmt.Fprintf(stdout, "%-9s %s\n", "by:", by)
		layers := []string{sandbox.LayerFS, sandbox.LayerTmp, sandbox.LayerSecrets, sandbox.LayerPID, sandbox.LayerNet, sandbox.LayerProcs}
		if runtime.GOOS == "linux" {
			layers = append(layers, sandbox.LayerSeccomp)
		}
		for _, layer := range layers {
			v, _ := s[layer].(string)
			if v == "" {
				v = "missing"
			}
			fmt.Fprintf(stdout, "%-9s %s\n", layer+":", v)
		}
		printNetwork(stdout, g, cfg)
		if len(missing) > 0 {
			fmt.Fprintln(stdout, "missing:")
			for _, m := range missing {
				fmt.Fprintf(stdout, "  - %s\n", m)
			}
			return 1
		}
		fmt.Fprintln(stdout, "every layer applies")
		return ok
	}
	fmt.Fprintf(stdout, "sandbox:  not run: %s\n", env.Text)
	return 1
}

// printNetwork says how commands reach the network, and what the preset
// "registries" resolves to on this machine, whether or not it is in use.
func printNetwork(w io.Writer, g *shellgate.Gate, cfg shellgate.Config) {
	mode := g.NetworkMode()
	fmt.Fprintf(w, "%-9s %s\n", "network:", mode)
	if mode == shellgate.NetworkAllowList {
		if allow, err := g.NetworkAllow(); err != nil {
			fmt.Fprintf(w, "          the allow-list: %v\n", err)
		} else {
			fmt.Fprintf(w, "          allowed: %s\n", strings.Join(allow, " "))
		}
	} else if len(cfg.Network.Allow) > 0 {
		fmt.Fprintln(w, "          [network] allow is not in force: allow-listed egress needs the network off and the Linux sandbox")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, sources := shellgate.ResolveNetworkAllow(ctx, []string{"registries"}, g.Info().Root, nil)
	fmt.Fprintln(w, "preset registries (--allow-domain registries):")
	if len(sources) == 0 {
		fmt.Fprintln(w, "  no package manager answered")
	}
	for _, s := range sources {
		fmt.Fprintf(w, "  %-6s %s (from %s)\n", s.Tool+":", strings.Join(s.Hosts, " "), s.From)
		if s.Note != "" {
			fmt.Fprintf(w, "         %s\n", s.Note)
		}
	}
}

// sandboxMechanism is what confines commands on each system.
var sandboxMechanism = map[string]string{
	"linux":   "a helper process in user, mount, PID, IPC and network namespaces, with Landlock",
	"darwin":  "a Seatbelt profile applied by " + sandbox.SandboxExec + " to each command",
	"windows": "a job object (kill on close, process and memory limits); files, network and secrets are not confined",
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkpointsLine says where the project's checkpoints are, how big, and how
// long they are kept; it only looks (a project without a store keeps none).
func checkpointsLine(cfg shellgate.Config) string {
	st, err := shellgate.LookCheckpoints(cfg)
	if err != nil && st.Dir == "" {
		return fmt.Sprintf("no checkpoints: %v", err)
	}
	if err != nil {
		return fmt.Sprintf("checkpoints in %s: %v", st.Dir, err)
	}
	c := cfg.Checkpoints
	bounds := fmt.Sprintf("the oldest pruned past %d commands, %s or %s; files over %s are not kept (max_file_size); see shellgate changes, shellgate undo",
		cmp.Or(c.MaxCount, checkpoint.DefaultMaxCount), showAge(cmp.Or(c.MaxAge, checkpoint.DefaultMaxAge)),
		checkpoint.ShowSize(cmp.Or(c.MaxSize, checkpoint.DefaultMaxSize)), checkpoint.ShowSize(cmp.Or(c.MaxFileSize, checkpoint.DefaultMaxFileSize)))
	if !st.Exists {
		return fmt.Sprintf("checkpoints in %s: none yet (the first command that may write makes the store); %s", st.Dir, bounds)
	}
	keeper := "no keeper runs"
	if st.Keeper > 0 {
		keeper = fmt.Sprintf("a keeper (pid %d) watches the root for one-shot runs", st.Keeper)
	}
	commands := fmt.Sprintf("%d commands", st.Commands)
	if st.Commands == 1 {
		commands = "1 command"
	}
	return fmt.Sprintf("checkpoints in %s: %s, %.1f MiB; %s; %s", st.Dir, commands, float64(st.Size)/(1<<20), keeper, bounds)
}

// showAge says a checkpoint age as the config would: whole days as days.
func showAge(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		if d == 24*time.Hour {
			return "1 day"
		}
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
