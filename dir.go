package shellgate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/analysis"
)

// dirError is a directory parameter that cannot be used, with its envelope code.
type dirError struct {
	code envelope.Code
	msg  string
}

func (e *dirError) Error() string { return e.msg }

// resolveDir turns the request's directory into an absolute path inside root (symlinks
// followed) and its POSIX form relative to root, or says why it cannot (with the
// envelope code: a typed error, so that no caller asserts its type). root must
// already be absolute and free of symlinks.
func resolveDir(root, dir string) (abs, rel string, _ *dirError) {
	if dir == "" {
		dir = "."
	}
	if strings.ContainsRune(dir, 0) {
		return "", "", &dirError{envelope.InvalidParam, "Parameter 'directory' contains a NUL byte."}
	}
	joined := dir
	if !filepath.IsAbs(dir) {
		joined = filepath.Join(root, dir)
	}
	// Check the lexical path first, so "../x" is refused even when it doesn't exist.
	if !within(root, filepath.Clean(joined)) {
		return "", "", accessDenied(dir, filepath.Clean(joined), root)
	}
	real, err := filepath.EvalSymlinks(joined)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", &dirError{envelope.NotFound, fmt.Sprintf("Directory '%s' does not exist.", dir)}
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrPermission) {
			return "", "", &dirError{envelope.PermissionDenied, fmt.Sprintf("Permission denied reading directory '%s'.", dir)}
		}
		if errors.Is(err, syscall.ENOTDIR) { // a file used as a directory: "file.txt/sub"
			return "", "", &dirError{envelope.InvalidParam, fmt.Sprintf("'%s' is not a directory.", dir)}
		}
		return "", "", &dirError{envelope.InvalidParam, fmt.Sprintf("Directory '%s' cannot be used: %v", dir, err)}
	}
	if !within(root, real) {
		return "", "", accessDenied(dir, real, root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", "", &dirError{envelope.NotFound, fmt.Sprintf("Directory '%s' does not exist.", dir)}
	}
	if !fi.IsDir() {
		return "", "", &dirError{envelope.InvalidParam, fmt.Sprintf("'%s' is not a directory.", dir)}
	}
	r, err := filepath.Rel(root, real)
	if err != nil {
		return "", "", accessDenied(dir, real, root)
	}
	return real, filepath.ToSlash(r), nil
}

func accessDenied(dir, resolved, root string) *dirError {
	return &dirError{envelope.AccessDenied, fmt.Sprintf(
		"Access denied. Path must be within project root: directory '%s' resolves to %s, outside %s.", dir, resolved, root)}
}

// within reports whether path is root or below it, comparing whole components so
// that /work/root-evil is not inside /work/root.
func within(root, path string) bool {
	if path == root {
		return true
	}
	r := root
	if !strings.HasSuffix(r, string(filepath.Separator)) {
		r += string(filepath.Separator)
	}
	if analysis.FoldsNames { // the one case-fold fact
		return strings.HasPrefix(strings.ToLower(path), strings.ToLower(r))
	}
	return strings.HasPrefix(path, r)
}
