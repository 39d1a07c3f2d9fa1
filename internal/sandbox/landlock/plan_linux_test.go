package landlock

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestPlanFor(t *testing.T) {
	t.Parallel()
	const (
		v1  = 0x1fff          // execute ... make_sym
		v2  = v1 | 0x2000     // + refer
		v3  = v2 | 0x4000     // + truncate
		v5  = v3 | 0x8000     // + ioctl_dev
		ro  = 0x1 | 0x4 | 0x8 // execute, read_file, read_dir
		tcp = 0x3             // bind, connect
		all = 0x3             // abstract unix socket, signal
	)
	strict := Rules{Scope: true}
	open := Rules{AllowTCP: true}
	for _, tc := range []struct {
		abi     int
		rules   Rules
		attr    rulesetAttr
		size    uintptr
		missing []string // a word from each Missing line
	}{
		{1, strict, rulesetAttr{v1, 0, 0}, 8, []string{"truncat", "TCP", "ioctl", "scoped"}},
		{2, strict, rulesetAttr{v2, 0, 0}, 8, []string{"truncat", "TCP", "ioctl", "scoped"}},
		{3, strict, rulesetAttr{v3, 0, 0}, 8, []string{"TCP", "ioctl", "scoped"}},
		{4, strict, rulesetAttr{v3, tcp, 0}, 16, []string{"ioctl", "scoped"}},
		{5, strict, rulesetAttr{v5, tcp, 0}, 16, []string{"scoped"}},
		{6, strict, rulesetAttr{v5, tcp, all}, 24, nil},
		{7, strict, rulesetAttr{v5, tcp, all}, 24, nil},
		{1, open, rulesetAttr{v1, 0, 0}, 8, []string{"truncat", "ioctl"}},
		{4, open, rulesetAttr{v3, 0, 0}, 8, []string{"ioctl"}},
		{7, open, rulesetAttr{v5, 0, 0}, 8, nil},
		{7, Rules{AllowTCP: true, Scope: true}, rulesetAttr{v5, 0, all}, 24, nil},
	} {
		p := planFor(tc.abi, tc.rules)
		if diff := cmp.Diff(tc.attr, p.attr, cmp.AllowUnexported(rulesetAttr{})); diff != "" {
			t.Errorf("ABI %d %+v: attr (-want +got):\n%s", tc.abi, tc.rules, diff)
		}
		if p.size != tc.size {
			t.Errorf("ABI %d %+v: size %d, want %d", tc.abi, tc.rules, p.size, tc.size)
		}
		if p.readOnly != ro || p.readWrite != tc.attr.handledAccessFS {
			t.Errorf("ABI %d: readOnly %#x readWrite %#x, want %#x %#x", tc.abi, p.readOnly, p.readWrite, ro, tc.attr.handledAccessFS)
		}
		if len(p.missing) != len(tc.missing) {
			t.Errorf("ABI %d %+v: missing %q, want lines about %q", tc.abi, tc.rules, p.missing, tc.missing)
			continue
		}
		for i, word := range tc.missing {
			if !strings.Contains(p.missing[i], word) {
				t.Errorf("ABI %d: missing[%d] = %q, want it about %q", tc.abi, i, p.missing[i], word)
			}
		}
	}
}

// TestKernelLayout pins the structs to the kernel's: landlock_ruleset_attr
// is three u64s, landlock_path_beneath_attr is packed with parent_fd at 8.
func TestKernelLayout(t *testing.T) {
	t.Parallel()
	if got := unsafe.Sizeof(rulesetAttr{}); got != 24 {
		t.Errorf("sizeof(rulesetAttr) = %d, want 24", got)
	}
	if got := unsafe.Offsetof(pathBeneathAttr{}.parentFD); got != 8 {
		t.Errorf("offsetof(parentFD) = %d, want 8", got)
	}
	if fsFile != unix.LANDLOCK_ACCESS_FS_EXECUTE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV {
		t.Errorf("fsFile = %#x", fsFile)
	}
}
