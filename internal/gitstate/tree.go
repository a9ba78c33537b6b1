package gitstate

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// invalidateTree rewrites a TREE extension (git's cache-tree.c) so that the
// cached trees holding any of paths (the root's and each directory's on the
// way) are marked invalid, an entry count of -1 without an object name, as
// git's cache_tree_invalidate_path does; git then builds them anew.
func invalidateTree(data []byte, hashSize int, paths []string) ([]byte, error) {
	if len(paths) == 0 {
		return data, nil
	}
	var out bytes.Buffer
	rest, err := treeNode(data, hashSize, paths, true, &out)
	if err != nil {
		return nil, err
	}
	out.Write(rest) // git ignores what follows the root's tree
	return out.Bytes(), nil
}

// treeNode copies one node and its subtrees from b to out, invalidating it
// if hit; paths are relative to the node. It returns what follows it.
func treeNode(b []byte, hashSize int, paths []string, hit bool, out *bytes.Buffer) ([]byte, error) {
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return nil, errors.New("index: TREE: unterminated name")
	}
	name := b[:nul]
	b = b[nul+1:]
	lf := bytes.IndexByte(b, '\n')
	if lf < 0 {
		return nil, errors.New("index: TREE: no counts")
	}
	countStr, subStr, ok := strings.Cut(string(b[:lf]), " ")
	count, err1 := strconv.Atoi(countStr)
	subtrees, err2 := strconv.Atoi(subStr)
	if !ok || err1 != nil || err2 != nil || subtrees < 0 {
		return nil, errors.New("index: TREE: bad counts")
	}
	b = b[lf+1:]
	out.Write(name)
	out.WriteByte(0)
	var oid []byte
	if count >= 0 {
		if len(b) < hashSize {
			return nil, errors.New("index: TREE: truncated object name")
		}
		oid, b = b[:hashSize], b[hashSize:]
	}
	if hit && count >= 0 {
		count, oid = -1, nil
	}
	out.WriteString(strconv.Itoa(count) + " " + strconv.Itoa(subtrees) + "\n")
	out.Write(oid)
	for range subtrees {
		var err error
		if len(b) == 0 {
			return nil, errors.New("index: TREE: missing subtree")
		}
		child := string(b[:max(bytes.IndexByte(b, 0), 0)])
		var under []string
		for _, p := range paths {
			if rest, ok := strings.CutPrefix(p, child+"/"); ok {
				under = append(under, rest)
			}
		}
		if b, err = treeNode(b, hashSize, under, len(under) > 0, out); err != nil {
			return nil, err
		}
	}
	return b, nil
}
