package sandbox

import (
	"slices"
	"testing"
)

func TestTierOfRoundTrip(t *testing.T) {
	t.Parallel()
	full := TierOf([]string{LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerIPCNS, LayerRlimits, LayerSeccomp, LayerLandlock})
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
	if TierOf(nil).Full() {
		t.Error("an empty tier is full")
	}
}
