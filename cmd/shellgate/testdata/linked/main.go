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
	_ "os/exec"
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
	_ "syscall"
	_ "text/tabwriter"
	_ "text/template"
	_ "time"
	_ "unicode"
	_ "unicode/utf16"
	_ "unicode/utf8"
)

func main() {
	if len(os.Args) == 2 && nested(os.Args[1]) {
		return
	}
	fmt.Println("hi")
}
