//go:build linux

package seccomp

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data, the input of a seccomp program.
type seccompData struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

// bytes lays the data out as the kernel does on a little-endian arch.
func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], uint32(d.nr))
	binary.LittleEndian.PutUint32(b[4:], d.arch)
	binary.LittleEndian.PutUint64(b[8:], d.ip)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// runBPF interprets a seccomp program on data and returns its verdict. It
// knows the instructions Program emits and refuses anything else, and checks
// what the kernel's seccomp_check_filter checks for them: aligned loads
// inside seccomp_data, jumps inside the program, a return at every end.
func runBPF(prog []unix.SockFilter, data seccompData) (uint32, error) {
	in := data.bytes()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if ins.K%4 != 0 || ins.K >= uint32(len(in)) {
				return 0, fmt.Errorf("pc %d: load at offset %d outside seccomp_data or unaligned", pc, ins.K)
			}
			acc = binary.LittleEndian.Uint32(in[ins.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var holds bool
			switch ins.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				holds = acc == ins.K
			case unix.BPF_JGE:
				holds = acc >= ins.K
			case unix.BPF_JGT:
				holds = acc > ins.K
			case unix.BPF_JSET:
				holds = acc&ins.K != 0
			}
			skip := int(ins.Jf)
			if holds {
				skip = int(ins.Jt)
			}
			if pc+1+int(ins.Jt) >= len(prog) || pc+1+int(ins.Jf) >= len(prog) {
				return 0, fmt.Errorf("pc %d: jump past the end of a %d-instruction program", pc, len(prog))
			}
			pc += skip
		case unix.BPF_RET | unix.BPF_K:
			return ins.K, nil
		default:
			return 0, fmt.Errorf("pc %d: instruction %#x not understood", pc, ins.Code)
		}
	}
	return 0, fmt.Errorf("program fell off its end")
}
