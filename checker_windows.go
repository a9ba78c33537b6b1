package shellgate

import "os"

// openDir proves a directory can be opened, as a command starting in it must.
func openDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return f.Close()
}
