//go:build windows || darwin

package shellgate

// Windows and macOS volumes are case-insensitive by default.
const isCaseInsensitiveFS = true
