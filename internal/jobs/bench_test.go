package jobs

import "testing"

// BenchmarkSmallCallLog is a call's log of `echo hi` as it is now (kept in
// memory) against one whose file is made at the first byte and removed at
// the call's end, as every call's log was before: the baseline in the same
// run. On ext4 the file's cost grows with the recently deleted inodes
// around it (ext4's free-inode search steps over each), so it is measured in
// the test's temporary directory, where the default spill directory is.
func BenchmarkSmallCallLog(b *testing.B) {
	dir := b.TempDir()
	for _, tc := range []struct {
		name string
		file bool
	}{{"memory", false}, {"file-at-first-byte", true}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				for _, name := range []string{"job-stdout", "job-stderr"} {
					l := NewLog(dir, name, 1<<30, nil)
					l.Whole()
					if name == "job-stdout" {
						l.Write([]byte("hi\n"))
						if tc.file {
							l.filePath()
						}
					}
					l.readSince(0, 1000)
					l.Remove()
				}
			}
		})
	}
}
