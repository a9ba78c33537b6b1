// Command linked is the floor under a one-shot shellgate command: a hello
// world linking every package outside this module that shellgate imports,
// so that it pays the Go runtime's start and the initialisation of all those
// packages, and does nothing else. BenchmarkCLI runs it beside shellgate;
// TestLinkedFloorLinksAll keeps the list whole.
//
// "linked nested" is the floor under a sandboxed run: the same program
// started again as a child in new user, mount, PID, IPC and network
// namespaces (its uid mapped, one processor), as a session's helper is, which
// runs bash -c 'echo hi' and exits; no view, no cgroup, no policy.
package main

import (
	"fmt"

	_ "bufio"
	_ "bytes"
	_ "compress/zlib"
	_ "context"
	_ "crypto/hmac"
	_ "crypto/rand"
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/subtle"
	_ "embed"
	_ "encoding/base64"
	_ "encoding/binary"
	_ "encoding/hex"
	_ "encoding/json"
	_ "encoding/xml"
	_ "errors"
	_ "flag"

	_ "github.com/charmbracelet/x/ansi"
	_ "github.com/charmbracelet/x/ansi/parser"
	_ "github.com/charmbracelet/x/vt"
	_ "github.com/creack/pty"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/landlock-lsm/go-landlock/landlock/syscall"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/pelletier/go-toml/v2/unstable"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
	_ "io"
	_ "io/fs"
	_ "log/slog"
	_ "maps"
	_ "math"
	_ "math/rand/v2"
	_ "mvdan.cc/sh/v3/syntax"
	_ "net"
	_ "net/http"
	_ "net/netip"
	_ "net/url"
	"os"
	"os/exec"
	_ "os/signal"
	_ "path"
	_ "path/filepath"
	_ "reflect"
	_ "regexp"
	_ "runtime"
	_ "runtime/debug"
	_ "slices"
	_ "sort"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "sync/atomic"
	"syscall"
	_ "text/tabwriter"
	_ "text/template"
	_ "time"
	_ "unicode"
	_ "unicode/utf16"
	_ "unicode/utf8"
)

func main() {
	switch {
	case len(os.Args) == 2 && os.Args[1] == "nested":
		uid, gid := os.Getuid(), os.Getgid()
		cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{os.Args[0], "nested-child"}, Env: []string{"GOMAXPROCS=1"},
			Stdout: os.Stdout, Stderr: os.Stderr, Dir: "/",
			SysProcAttr: &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			}}
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "nested:", err)
			os.Exit(1)
		}
	case len(os.Args) == 2 && os.Args[1] == "nested-child":
		cmd := exec.Command("/bin/bash", "--noprofile", "--norc", "-c", "echo hi")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "nested child:", err)
			os.Exit(1)
		}
	default:
		fmt.Println("hi")
	}
}
