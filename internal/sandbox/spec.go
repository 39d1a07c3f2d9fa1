package sandbox

// spec is what Run hands the helper over its setup pipe.
type spec struct {
	Argv       []string `json:"argv"`
	Dir        string   `json:"dir"`
	Env        []string `json:"env"`
	Workspace  string   `json:"workspace,omitempty"`
	ReadOnly   []string `json:"read_only,omitempty"`
	Network    bool     `json:"network"`
	Loopback   bool     `json:"loopback,omitempty"` // own network namespace with lo up; never with Network
	Nested     bool     `json:"nested,omitempty"`   // the target may build sandboxes of its own
	Limits     Limits   `json:"limits"`
	Namespaces bool     `json:"namespaces"` // false only in a degraded run without user namespaces
	TmpSize    int64    `json:"tmp_size"`
	Probe      bool     `json:"probe,omitempty"` // set up, report the layers, run nothing
	Mode       string   `json:"mode,omitempty"`  // run this in-process mode of the helper instead of Argv
	Covers     []Cover  `json:"covers,omitempty"`
}

// inet reports whether the target may make AF_INET and AF_INET6 sockets
// and use TCP: with the host's network, or in its own namespace whose only
// interface is its loopback.
func (sp spec) inet() bool { return sp.Network || sp.Loopback }

// status is what the helper reports on its status pipe: the layers it put
// in place, then how the target ended, or the setup step that failed.
type status struct {
	Layers []string `json:"layers,omitempty"`
	Skip   []string `json:"skip,omitempty"` // layers the kernel lacks
	// Detail says how a layer is in place, where there is more than one way
	// ("close_range" or a fallback).
	Detail map[string]string `json:"detail,omitempty"`
	Error  string            `json:"error,omitempty"`
	Exit   int               `json:"exit"`
	Signal string            `json:"signal,omitempty"`
	Done   bool              `json:"done,omitempty"` // the target ended (or the probe finished)
}

// helperArgs are the arguments that start the helper mode of the binary.
var helperArgs = []string{"be-child", "sandbox"}

// Setup and status descriptors of the helper: ExtraFiles[0] and [1].
const (
	specFD   = 3
	statusFD = 4
)

// exitSetupFailed is the helper's exit status when it could not build the
// sandbox (the status pipe says why).
const exitSetupFailed = 125
