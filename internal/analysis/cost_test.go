package analysis

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAnalyzeTimeBudget(t *testing.T) {
	src := strings.Repeat("true; ", 5000)
	if _, err := Analyze(src, Options{Root: "/r", Budget: time.Nanosecond}); !errors.Is(err, ErrCost) {
		t.Errorf("over budget: got %v, want ErrCost", err)
	}
	if _, err := Analyze(src, Options{Root: "/r"}); err != nil {
		t.Errorf("default budget: %v", err)
	}
}
