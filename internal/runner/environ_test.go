package runner

import "testing"

func TestEnvHas(t *testing.T) {
	pattern := []byte("SHELLGATE_RUN=ab.1\x00")
	tests := []struct {
		env  string
		want bool
	}{
		{"SHELLGATE_RUN=ab.1\x00", true},
		{"A=1\x00SHELLGATE_RUN=ab.1\x00B=2\x00", true},
		{"A=1\x00SHELLGATE_RUN=ab.12\x00", false},
		{"A=xSHELLGATE_RUN=ab.1\x00", false}, // inside a value, not an entry
		{"A=xSHELLGATE_RUN=ab.1\x00SHELLGATE_RUN=ab.1\x00", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := envHas([]byte(tt.env), pattern); got != tt.want {
			t.Errorf("envHas(%q) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

func TestProcArgsEnv(t *testing.T) {
	tests := []struct {
		raw  string
		want string
	}{
		{"\x02\x00\x00\x00/bin/sleep\x00\x00\x00\x00sleep\x00600\x00A=1\x00B=2\x00\x00ptr_munge=\x00", "A=1\x00B=2\x00"},
		{"\x01\x00\x00\x00/bin/sh\x00\x00sh\x00\x00executable_path=/bin/sh\x00", ""},
		{"\x05\x00\x00\x00/bin/sh\x00sh\x00", ""},
		{"\x01\x00", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := string(procArgsEnv([]byte(tt.raw))); got != tt.want {
			t.Errorf("procArgsEnv(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
