package output

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// spillFile is the file holding the complete output, created lazily. Errors never
// reach the writer: they are kept for Result.SpillErr.
type spillFile struct {
	started bool // creation was attempted; it happens once
	f       *os.File
	path    string
	max     int64
	quota   *Quota
	written int64
	capped  bool
	err     error
}

// start creates the spill file in o.SpillDir.
func (s *spillFile) start(o Options) {
	s.started, s.max, s.quota = true, o.SpillMax, o.Quota
	f, err := createSpill(o.SpillDir, o.Name)
	if err != nil {
		s.err = fmt.Errorf("cannot create spill file: %w", err)
		return
	}
	s.f, s.path = f, f.Name()
}

// adopt takes the file of o.Store, holding the stream's total bytes, as the
// spill file (already complete), within the quota's room.
func (s *spillFile) adopt(o Options, total int64) {
	s.started, s.max, s.quota = true, o.SpillMax, o.Quota
	path, size, err := o.Store.Handover()
	switch {
	case err != nil:
		s.err = fmt.Errorf("cannot write spill file: %w", err)
		return
	case path == "":
		return
	}
	s.path, s.written = path, s.quota.adopt(path, size)
	s.capped = s.written < total
}

// write appends p, up to max bytes in all.
func (s *spillFile) write(p []byte) {
	if s.f == nil || len(p) == 0 {
		return
	}
	if room := s.max - s.written; int64(len(p)) > room {
		p, s.capped = p[:room], true
	}
	if got := s.quota.take(int64(len(p))); got < int64(len(p)) {
		p, s.capped = p[:got], true
	}
	if len(p) == 0 {
		return
	}
	n, err := s.f.Write(p)
	s.written += int64(n)
	s.quota.give(int64(len(p) - n))
	if err != nil {
		s.fail(fmt.Errorf("cannot write spill file: %w", err))
	}
}

// fail gives up on an incomplete file: removing it frees the disk that likely ran
// out, and a path in the envelope must mean the complete output.
func (s *spillFile) fail(err error) {
	s.f.Close()
	os.Remove(s.path)
	s.quota.give(s.written)
	s.f, s.path, s.err = nil, "", err
}

func (s *spillFile) close() {
	if s.f == nil {
		return
	}
	if err := s.f.Close(); err != nil {
		s.fail(fmt.Errorf("cannot close spill file: %w", err))
		return
	}
	s.f = nil
	s.quota.done(s.path, s.written)
}

func (s *spillFile) result() (path string, capped bool, err error) {
	return s.path, s.capped && s.path != "", s.err
}

// createSpill creates a new spill file, mode 0600: in a Gate's own
// directory (SessionDirPrefix) <dir>/<n>.<name>.log, n this process's next
// number, and elsewhere <dir>/<random-id>.<name>.log, a name nobody can
// guess or pre-create. A Gate's directory is private (0700, in the private
// spill directory) and only its Gate writes there, so a number is a name
// nobody else makes, O_EXCL steps over one taken all the same, and the path a
// model reads and writes into its commands is 31 characters shorter.
func createSpill(dir, name string) (*os.File, error) {
	// The path goes into the envelope; relative to our cwd it would mean nothing there.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	if strings.HasPrefix(filepath.Base(dir), SessionDirPrefix) {
		for range 100 {
			path := filepath.Join(dir, strconv.FormatUint(spillSeq.Add(1), 10)+"."+cleanName(name)+spillExt)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if !errors.Is(err, fs.ErrExist) {
				return f, err
			}
		}
	}
	var id [spillIDLen / 2]byte
	rand.Read(id[:]) // never fails (crypto/rand)
	path := filepath.Join(dir, hex.EncodeToString(id[:])+"."+cleanName(name)+spillExt)
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// spillSeq numbers the spill files this process makes in Gates' directories.
var spillSeq atomic.Uint64

// prepareDir creates dir, mode 0700, if needed. The default directory lives in the
// shared temp dir, so before anything is made in it (a session's directory),
// it must be ours and private: whoever owned it could swap what we make there
// for a link to a directory of theirs. See checkPrivateDir.
func prepareDir(dir string) error {
	dir = filepath.Clean(dir)
	if shared := filepath.Clean(DefaultSpillDir()); dir == shared || filepath.Dir(dir) == shared {
		if err := os.MkdirAll(shared, 0o700); err != nil {
			return err
		}
		if err := checkPrivateDir(shared); err != nil {
			return err
		}
	}
	return os.MkdirAll(dir, 0o700)
}
