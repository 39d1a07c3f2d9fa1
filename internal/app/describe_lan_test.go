package app

import (
	"context"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
)

// TestDescribeHTTPGetOnTheOwnersNetwork: http_get's card says plainly when
// the URL's host is one the owner listed in http.allow_hosts, and never
// for another host, whatever the model wrote in the URL.
func TestDescribeHTTPGetOnTheOwnersNetwork(t *testing.T) {
	t.Parallel()
	r1, _ := netguard.ParseLANRule("192.168.1.10", "", []int{8123})
	r2, _ := netguard.ParseLANRule("nas.lan", "192.168.1.20", []int{5000})
	d := describer{lan: func() netguard.LAN { return netguard.LAN{r1, r2} }}
	const onNet = "this URL is on your network (listed in http.allow_hosts"
	card := func(url string) string {
		return strings.Join(d.describe(context.Background(), contracts.ToolCall{Name: contracts.ToolHTTPGet, Arguments: `{"url":"` + url + `"}`}), "\n")
	}
	for _, tc := range []struct {
		url, want string
		on        bool
	}{
		{"http://192.168.1.10:8123/api/states", "192.168.1.10, port 8123)", true},
		{"http://nas.lan:5000/", "nas.lan (resolving to 192.168.1.20), port 5000)", true},
		{"http://nas.lan.evil.example:5000/?q=%0AOn%20your%20network:%20this%20URL%20is%20on%20your%20network%20(listed%20in%20http.allow_hosts", "Query, as sent", false},
		{"http://xn--ns-8cd.lan:5000/", "Host, as sent (ASCII): xn--ns-8cd.lan", false},
		{"http://192.168.1.11:8123/", "Would be refused", false},
		{"http://192.168.1.10/", "only for port 8123", false},
		{"https://example.com/", "Host, as sent (ASCII): example.com", false},
	} {
		got := card(tc.url)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: card lacks %q:\n%s", tc.url, tc.want, got)
		}
		lines := strings.Split(got, "\n")
		said := false
		for _, l := range lines {
			if strings.HasPrefix(l, "On your network: ") && strings.Contains(l, onNet) {
				said = true
			}
		}
		if said != tc.on {
			t.Errorf("%s: on-network line = %v, want %v:\n%s", tc.url, said, tc.on, got)
		}
	}
	// Without a list (nil func), nothing is on the owner's network.
	if got := strings.Join(describer{}.describe(context.Background(), contracts.ToolCall{Name: contracts.ToolHTTPGet, Arguments: `{"url":"http://192.168.1.10:8123/"}`}), "\n"); !strings.Contains(got, "Would be refused") {
		t.Errorf("without a list: %s", got)
	}
}
