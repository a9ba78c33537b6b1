package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Every jump of the program lands on an instruction of it, forward, and
// every path ends in a return: the kernel would refuse the filter otherwise,
// and every command would go unconfined by it.
func TestProgramIsWellFormed(t *testing.T) {
	for name, prog := range map[string][]unix.SockFilter{
		"sockets and modes": socketsAndModes(), "unix sends": notified(UnixSends),
		"write opens": notified(WriteOpens), "both": notified(UnixSends | WriteOpens),
	} {
		t.Run(name, func(t *testing.T) { wellFormed(t, prog) })
	}
}

func wellFormed(t *testing.T, prog []unix.SockFilter) {
	for i, in := range prog {
		if in.Code&0x07 == unix.BPF_JMP {
			for _, off := range []uint8{in.Jt, in.Jf} {
				if to := i + 1 + int(off); to >= len(prog) {
					t.Errorf("instruction %d jumps to %d, past the end (%d)", i, to, len(prog))
				}
			}
		}
	}
	if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K {
		t.Errorf("the program ends in %#x, not a return", last.Code)
	}
	if len(prog) > 255 {
		t.Errorf("%d instructions: jumps are 8 bits", len(prog))
	}
}
