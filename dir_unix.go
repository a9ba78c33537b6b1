//go:build !windows && !darwin

package shellgate

const isCaseInsensitiveFS = false
