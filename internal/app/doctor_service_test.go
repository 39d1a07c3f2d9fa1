package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// TestDoctorMemoryController: doctor says whether the kernel's memory
// controller is on, read from a fake /sys, /proc and /boot: on cgroup v2
// (cgroup.controllers) and v1 (/proc/cgroups), and off the way stock
// Raspberry Pi OS boots it (cgroup_disable=memory), with the fix for the
// cmdline.txt the machine has. It warns; it does not fail.
func TestDoctorMemoryController(t *testing.T) {
	const piCmdline = "console=serial0,115200 console=tty1 root=PARTUUID=1234-02 rootfstype=ext4 fsck.repair=yes rootwait cgroup_disable=memory\n"
	cases := []struct {
		name  string
		files map[string]string
		want  []string
		not   []string
	}{
		{name: "v2 on", files: map[string]string{"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n"},
			want: []string{"✓ memory", "on (cgroup v2)"}},
		{name: "v2 off, Raspberry Pi OS bookworm", files: map[string]string{
			"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io pids\n", "proc/cmdline": piCmdline, "boot/firmware/cmdline.txt": piCmdline},
			want: []string{"! memory", "memory controller is off (the kernel command line has cgroup_disable=memory)",
				"MemoryMax does nothing", "cgroup_enable=memory cgroup_memory=1", "/boot/firmware/cmdline.txt"}},
		{name: "v2 off, older Raspberry Pi OS", files: map[string]string{
			"sys/fs/cgroup/cgroup.controllers": "cpu pids\n", "proc/cmdline": piCmdline, "boot/cmdline.txt": piCmdline},
			want: []string{"! memory", "/boot/cmdline.txt"}, not: []string{"firmware"}},
		{name: "v2 off, elsewhere", files: map[string]string{"sys/fs/cgroup/cgroup.controllers": "cpu pids\n", "proc/cmdline": "quiet\n"},
			want: []string{"! memory", "memory controller is off: ", "add cgroup_enable=memory to the kernel command line"},
			not:  []string{"cgroup_disable"}},
		{name: "v2, memorymax is not memory", files: map[string]string{"sys/fs/cgroup/cgroup.controllers": "memorymax pids\n"},
			want: []string{"! memory"}},
		{name: "v1 on", files: map[string]string{"proc/cgroups": "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t2\t1\t1\nmemory\t4\t171\t1\n"},
			want: []string{"✓ memory", "on (cgroup v1)"}},
		{name: "v1 off", files: map[string]string{"proc/cgroups": "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t0\t1\t0\n",
			"proc/cmdline": piCmdline, "boot/cmdline.txt": piCmdline},
			want: []string{"! memory", "cgroup_disable=memory", "/boot/cmdline.txt"}},
		{name: "no cgroups at all", files: map[string]string{}, want: []string{"- memory", "unknown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			d := &doctor{w: &out}
			d.checkMemoryController(root)
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("doctor lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("doctor says %q:\n%s", n, out.String())
				}
			}
			if d.failed != 0 {
				t.Errorf("a memory controller that is off failed doctor; it should warn")
			}
		})
	}
}

// TestDoctorSandboxTier: a degraded tier is one warning line that names
// each missing layer and what its absence costs; a full tier without an
// optional layer says what that costs, without a warning.
func TestDoctorSandboxTier(t *testing.T) {
	var all []string
	for _, l := range sandbox.TierOf(nil).Layers {
		all = append(all, l.Name)
	}
	without := func(names ...string) []string {
		var out []string
		for _, n := range all {
			keep := true
			for _, x := range names {
				keep = keep && n != x
			}
			if keep {
				out = append(out, n)
			}
		}
		return out
	}
	cases := []struct {
		name       string
		inPlace    []string
		allowed    bool
		want       []string
		not        []string
		wantFailed bool
	}{
		{name: "full", inPlace: all, want: []string{"✓ sandbox    full tier"}, not: []string{"DEGRADED", "- sandbox    without"}},
		{name: "full without the optional ones", inPlace: without(sandbox.LayerMemCgroup, sandbox.LayerLandlock),
			want: []string{"✓ sandbox    full tier", "- sandbox    without landlock (no Landlock", "memory-cgroup (no memory cgroup per call"},
			not:  []string{"DEGRADED"}},
		{name: "degraded", inPlace: without(sandbox.LayerSeccomp, sandbox.LayerSockets),
			want: []string{"! sandbox    DEGRADED tier: missing seccomp (no system call filter", "socket-families (",
				"will refuse to run"},
			wantFailed: true},
		{name: "degraded and allowed", inPlace: without(sandbox.LayerNetNS), allowed: true,
			want: []string{"! sandbox    DEGRADED tier, allowed by sandbox.allow_degraded: code the model chooses runs without net-ns (commands reach the network"},
			not:  []string{"will refuse to run"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &doctor{w: &out}
			d.reportTier(sandbox.TierOf(c.inPlace), c.allowed)
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("doctor lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("doctor says %q:\n%s", n, out.String())
				}
			}
			if got := d.failed > 0; got != c.wantFailed {
				t.Errorf("failed = %d, want failures %v:\n%s", d.failed, c.wantFailed, out.String())
			}
		})
	}
}

// TestLayerLossNamesEveryLayer: each layer the sandbox reports has its cost
// in layerLoss, and layerLoss names no layer the sandbox does not have.
func TestLayerLossNamesEveryLayer(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range sandbox.TierOf(nil).Layers {
		seen[l.Name] = true
		if layerLoss[l.Name] == "" {
			t.Errorf("layerLoss lacks %s", l.Name)
		}
	}
	for name := range layerLoss {
		if !seen[name] {
			t.Errorf("layerLoss names %s, which the sandbox does not report", name)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d layers: did TierOf change?", len(seen))
	}
}
