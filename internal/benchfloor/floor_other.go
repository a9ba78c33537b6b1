//go:build !linux

package benchfloor

import "errors"

func (e Exit) start(string) (func() error, error) {
	return nil, errors.New("namespaces are Linux's")
}
