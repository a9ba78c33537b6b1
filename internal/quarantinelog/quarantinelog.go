// Package quarantinelog keeps, in shellgate's state, what the sandbox moved
// into a project's quarantine that no envelope has told yet: a shellgate
// killed while a command ran leaves what the session's helper moved aside at
// its end untold. The helper appends to the log through a descriptor
// shellgate hands it (the state directory is never in a command's view), and
// the next session in the project takes what the log holds, so a command can
// neither forge a report nor hide one. Whatever merely lies in the quarantine
// directory (which commands may write) is never reported from the listing.
package quarantinelog

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shellgate/shellgate/internal/protect"
)

// Entry is one move: From, moved to To (absolute paths), which then held
// the file Dev and Ino name.
type Entry struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	Dev  uint64    `json:"dev"`
	Ino  uint64    `json:"ino"`
	Time time.Time `json:"time"`
}

// maxLog bounds what Take reads: a log no session took for long stays small,
// and a larger one is not one shellgate wrote.
const maxLog = 1 << 20

// Path is root's log in dir (shellgate's state directory for these logs).
func Path(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".jsonl")
}

// Open opens the log at path for appending, made (0600, its directory 0700)
// if missing, never through a symlink.
func Open(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
}

// Write appends moves, each "from → to" as the sandbox says it (to relative
// to root, or beside from under a .shellgate-quarantined- name), with what
// is at to now, under the log's lock.
func Write(f *os.File, root string, moved []string) error {
	var b strings.Builder
	for _, m := range moved {
		from, to, ok := strings.Cut(m, " → ")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(filepath.Base(to), protect.QuarantinedPrefix):
			to = filepath.Join(filepath.Dir(from), filepath.Base(to))
		case !filepath.IsAbs(to):
			to = filepath.Join(root, to)
		}
		fi, err := os.Lstat(to)
		if err != nil {
			continue
		}
		e := Entry{From: from, To: to, Time: time.Now().UTC()}
		e.Dev, e.Ino = identity(fi)
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	if b.Len() == 0 {
		return nil
	}
	if err := lock(f); err != nil {
		return err
	}
	defer unlock(f)
	_, err := f.WriteString(b.String())
	return err
}

// Take returns the moves the log at path holds whose entry is still where it
// was moved (the same file), and empties the log. A missing log holds none.
func Take(path string) ([]Entry, error) {
	f, err := os.OpenFile(path, os.O_RDWR|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lock(f); err != nil {
		return nil, err
	}
	defer unlock(f)
	var out []Entry
	sc := bufio.NewScanner(io.LimitReader(f, maxLog))
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil || !filepath.IsAbs(e.To) {
			continue
		}
		if fi, err := os.Lstat(e.To); err == nil {
			if dev, ino := identity(fi); dev == e.Dev && ino == e.Ino {
				out = append(out, e)
			}
		}
	}
	return out, f.Truncate(0)
}
