package runner

import (
	"bytes"
	"encoding/binary"
)

// envHas reports whether env, NUL-separated NAME=value entries, has an entry
// starting with pattern.
func envHas(env, pattern []byte) bool {
	if bytes.HasPrefix(env, pattern) {
		return true
	}
	for i := bytes.Index(env, pattern); i >= 0; {
		if env[i-1] == 0 {
			return true
		}
		next := bytes.Index(env[i+1:], pattern)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// procArgsEnv returns the environment part of a macOS KERN_PROCARGS2 buffer:
// argc (32-bit, little-endian), the executable path, NUL padding, argc arguments,
// then the environment, ended by an empty entry.
func procArgsEnv(raw []byte) []byte {
	if len(raw) < 4 {
		return nil
	}
	argc := int(binary.LittleEndian.Uint32(raw))
	rest := raw[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	for ; argc > 0; argc-- {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
	}
	if end := bytes.Index(rest, []byte{0, 0}); end >= 0 {
		rest = rest[:end+1]
	}
	if len(rest) > 0 && rest[0] == 0 {
		return nil // no environment at all
	}
	return rest
}
