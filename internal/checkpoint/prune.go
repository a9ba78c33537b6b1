package checkpoint

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// sizeEvery is how many checkpoints pass between two looks at the store's
// size (git count-objects), and two chances for git to pack loose objects.
const sizeEvery = 64

// prune drops the oldest records past MaxCount or MaxAge and, every
// sizeEvery checkpoints, past MaxSize; git then forgets what no record holds.
func (s *Store) prune() error {
	now := s.o.Now()
	drop := 0
	for drop < len(s.records)-1 && (len(s.records)-drop > s.o.MaxCount || now.Sub(s.records[drop].Time) > s.o.MaxAge) {
		drop++
	}
	gc := false
	if drop > 0 {
		if err := s.drop(drop); err != nil {
			return err
		}
	}
	if s.snaps%sizeEvery == 0 {
		for tries := 0; tries < 8; tries++ {
			size, err := s.Size()
			if err != nil {
				return err
			}
			if size <= s.o.MaxSize || len(s.records) <= 1 {
				break
			}
			if err := s.drop(max(1, len(s.records)/4)); err != nil {
				return err
			}
			if _, err := s.git(nil, "", "", "gc", "--quiet", "--prune=now"); err != nil {
				return err
			}
			gc = true
		}
		if !gc {
			// Pack loose objects once there are about a thousand: each takes a
			// disk block of its own (4 KiB for a checkpoint's small tree).
			if _, err := s.git(nil, "", "", "-c", "gc.auto=1000", "gc", "--auto", "--quiet"); err != nil {
				return err
			}
		}
	}
	return nil
}

// drop forgets the n oldest records.
func (s *Store) drop(n int) error {
	var del bytes.Buffer
	for _, r := range s.records[:n] {
		del.WriteString("delete refs/cp/" + strconv.Itoa(r.ID) + "-b\n")
		if r.After != "" {
			del.WriteString("delete refs/cp/" + strconv.Itoa(r.ID) + "-a\n")
		}
	}
	if _, err := s.git(del.Bytes(), "", "", "update-ref", "--stdin"); err != nil {
		return err
	}
	s.records = append([]Record(nil), s.records[n:]...)
	return s.rewriteLog(s.records)
}

// Size is the store's size on disk in bytes, as git counts its objects.
func (s *Store) Size() (int64, error) {
	out, err := s.git(nil, "", "", "count-objects", "-v")
	if err != nil {
		return 0, err
	}
	var kib int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if ok && (k == "size" || k == "size-pack" || k == "size-garbage") {
			n, _ := strconv.ParseInt(v, 10, 64)
			kib += n
		}
	}
	return kib << 10, nil
}
