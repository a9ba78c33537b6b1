package analysis

import "strings"

// optSpec says which options of a program take a value, so that the first
// operand (often the command a wrapper runs) can be found.
type optSpec struct {
	short string   // short options taking a value: "n" for "-n 5" and "-n5"
	long  []string // long options taking a value when not written --opt=value
}

// skipOpts returns the index of the first operand in args, past "--"; at most
// len(args).
func skipOpts(args []string, spec optSpec) int {
	return min(skipOptsRaw(args, spec), len(args))
}

func skipOptsRaw(args []string, spec optSpec) int {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			return i + 1
		case len(a) < 2 || a[0] != '-':
			return i
		case strings.HasPrefix(a, "--"):
			i++
			if !strings.Contains(a, "=") && hasLong(spec.long, a) {
				i++
			}
		default:
			i++
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(spec.short, a[j]) >= 0 {
					if j == len(a)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
		}
	}
	return i
}

func hasLong(longs []string, a string) bool {
	for _, l := range longs {
		if l == a {
			return true
		}
	}
	return false
}

// optValue finds the value of an option given as "-x v", "-xv", "--long v" or
// "--long=v", for options in short and long. It returns every value found and
// whether each is the index of a dynamic word.
func optValues(args []string, short byte, long string) (vals []string, idx []int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		switch {
		case short != 0 && len(a) >= 2 && a[0] == '-' && a[1] == short:
			if len(a) > 2 {
				vals, idx = append(vals, a[2:]), append(idx, i)
			} else if i+1 < len(args) {
				i++
				vals, idx = append(vals, args[i]), append(idx, i)
			}
		case long != "" && a == long:
			if i+1 < len(args) {
				i++
				vals, idx = append(vals, args[i]), append(idx, i)
			}
		case long != "" && strings.HasPrefix(a, long+"="):
			vals, idx = append(vals, a[len(long)+1:]), append(idx, i)
		}
	}
	return vals, idx
}
