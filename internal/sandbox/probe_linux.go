//go:build linux

package sandbox

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox/landlock"
	"github.com/shelldon/shelldon/internal/sandbox/seccomp"
)

// Probe finds out, once, which layers this kernel gives the sandbox, by
// building a real sandbox through the helper and reading back what it put
// in place. Nothing is assumed from kernel versions or config files.
func (r *Runner) Probe(ctx context.Context) Tier {
	r.once.Do(func() { r.tier = r.probe(ctx) })
	return r.tier
}

func (r *Runner) probe(ctx context.Context) Tier {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	p := Policy{Argv: []string{"true"}, Timeout: 10 * time.Second}
	p.defaults()
	sp := spec{Argv: p.Argv, Dir: "/", Env: p.Env, Limits: p.Limits, Namespaces: true, TmpSize: 1 << 20, Probe: true}
	st, err := r.probeOnce(ctx, sp, p)
	nsErr := ""
	switch {
	case err != nil:
		nsErr = err.Error()
	case st.Error != "":
		nsErr = st.Error
	}
	if nsErr != "" {
		// Without namespaces, see what else still works.
		sp.Namespaces = false
		st, err = r.probeOnce(ctx, sp, p)
		if err != nil {
			st = status{Error: err.Error()}
		}
	}
	got := map[string]bool{}
	landlockDetail := ""
	for _, l := range st.Layers {
		if v, ok := strings.CutPrefix(l, LayerLandlock+"-"); ok {
			got[LayerLandlock] = true
			landlockDetail = "ABI " + strings.TrimPrefix(v, "v")
			continue
		}
		got[l] = true
	}
	var t Tier
	for _, name := range required {
		l := Layer{Name: name, Required: true, OK: got[name], Detail: st.Detail[name]}
		if !l.OK {
			l.Detail = reason(name, nsErr, st)
		}
		t.Layers = append(t.Layers, l)
	}
	ll := Layer{Name: LayerLandlock, OK: got[LayerLandlock], Detail: landlockDetail}
	if !ll.OK {
		if _, err := landlock.ABI(); err != nil {
			ll.Detail = err.Error()
		} else {
			ll.Detail = "available but not applied: " + st.Error
		}
	}
	t.Layers = append(t.Layers, ll)
	cg := Layer{Name: LayerCgroup}
	if err := pidsAvailable(); err != nil {
		cg.Detail = "not used: " + err.Error() + " (rlimits bound each process instead)"
	} else {
		cg.OK, cg.Detail = true, "pids limit per sandbox (cgroup v1)"
		r.cgroups = true
	}
	t.Layers = append(t.Layers, cg)
	mem := Layer{Name: LayerMemCgroup}
	if own, err := memoryAvailable(); err != nil {
		mem.Detail = "not used: " + err.Error() + " (RLIMIT_DATA bounds each process's private memory; seccomp refuses the shared kinds)"
	} else {
		mem.OK, mem.Detail = true, "a memory limit per sandbox (cgroup v1, in "+own+"): its data limit, /tmp, /dev/shm and 32 MiB, no swap"
		r.memcg = own
	}
	t.Layers = append(t.Layers, mem)
	return t
}

// probeOnce runs the helper in probe mode and returns what it reported.
func (r *Runner) probeOnce(ctx context.Context, sp spec, p Policy) (status, error) {
	pr, err := r.start(ctx, sp, p, nil, io.Discard, io.Discard)
	if err != nil {
		return status{}, err
	}
	_, err = pr.Wait()
	return pr.st, err
}

func reason(layer, nsErr string, st status) string {
	switch layer {
	case LayerSeccomp, LayerSockets:
		if err := seccomp.Supported(); err != nil {
			return err.Error()
		}
	case LayerHelperSignals:
		if nsErr != "" {
			return "namespaces unavailable (the helper is no PID 1): " + nsErr
		}
		if err := seccomp.Supported(); err != nil {
			return err.Error()
		}
	case LayerFDsClosed, LayerHelperHidden:
	case LayerRlimits:
	default:
		if nsErr != "" {
			return "namespaces unavailable: " + nsErr
		}
	}
	if st.Error != "" {
		return st.Error
	}
	return "not in place"
}
