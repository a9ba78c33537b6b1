package helper

import (
	"encoding/json"
	"slices"
	"testing"
)

// A spawn's words reach the helper byte for byte: JSON alone turned each
// byte that is not UTF-8 into U+FFFD, so bash in the sandbox ran another
// command than the one judged (printf a$'\xff' printed a\xef\xbf\xbd).
func TestWordsKeepTheirBytes(t *testing.T) {
	for _, argv := range []Words{
		{"/bin/bash", "-c", "printf '%s' caf\xe9"},
		{"/bin/bash", "-c", "echo \xff\xfe; ls \xc3("},
		{"/bin/bash", "-c", "echo café ü"},
		{},
	} {
		b, err := json.Marshal(&Message{Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		if !slices.Equal(m.Argv, argv) {
			t.Errorf("sent %q, the helper got %q", argv, m.Argv)
		}
	}
}
