package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestTierOfRoundTrip(t *testing.T) {
	t.Parallel()
	full := TierOf([]string{LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerIPCNS, LayerProcMasked, LayerRlimits, LayerSeccomp,
		LayerSockets, LayerFDsClosed, LayerHelperHidden, LayerHelperSignals, LayerLandlock})
	if !full.Full() || !full.has(LayerLandlock) || full.has(LayerCgroup) {
		t.Fatalf("full tier: %s", full)
	}
	if got := TierOf(full.InPlace()).InPlace(); !slices.Equal(got, full.InPlace()) {
		t.Errorf("round trip: %v, want %v", got, full.InPlace())
	}
	degraded := TierOf([]string{LayerRlimits, LayerSeccomp})
	if degraded.Full() || degraded.has(LayerUserNS) {
		t.Errorf("degraded tier: %s", degraded)
	}
	// A tier from before the helper reported its descriptors, /proc and
	// signals closed (an older daemon) is not full.
	old := TierOf([]string{LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerIPCNS, LayerRlimits, LayerSeccomp})
	if old.Full() || !strings.Contains(old.Missing(), LayerHelperSignals) {
		t.Errorf("a tier without the new layers: %s", old)
	}
	if TierOf(nil).Full() {
		t.Error("an empty tier is full")
	}
}
