package analysis_test

import (
	"fmt"

	"github.com/shellgate/shellgate/internal/analysis"
)

func ExampleAnalyze() {
	a, err := analysis.Analyze(`cd sub && timeout 60 bash -c '\rm -f "$(cat list)"'`, analysis.Options{Root: "/project"})
	if err != nil {
		fmt.Println("refuse:", err)
		return
	}
	for _, c := range a.Commands {
		fmt.Println(c.Via, c.Name, c.Args, c.Dir)
	}
	// Output:
	// [] cd [sub] /project
	// [] timeout [60 bash -c \rm -f "$(cat list)"] /project/sub
	// [timeout] bash [-c \rm -f "$(cat list)"] /project/sub
	// [timeout bash -c] cat [list] /project/sub
	// [timeout bash -c] rm [-f "$(cat list)"] /project/sub
}

func ExampleAnalyze_parseError() {
	_, err := analysis.Analyze(`echo "unterminated`, analysis.Options{})
	fmt.Println(err)
	// Output:
	// 1:6: reached EOF without closing quote `"`
}
