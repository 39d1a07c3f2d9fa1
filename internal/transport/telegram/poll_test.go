package telegram

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// impatient is a Bot API that ignores the long poll's timeout: getUpdates
// answers at once, with the updates waiting or with nothing, as some
// emulators do. It counts the polls; past spin it stops answering (the
// call waits for its context), so that a bot polling in a tight loop
// lets the bubble's clock move and the test fail instead of hang.
type impatient struct {
	api  *fakeAPI
	spin int

	mu    sync.Mutex
	polls int
}

func (p *impatient) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls
}

func (p *impatient) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/getUpdates") {
		return p.api.RoundTrip(r)
	}
	p.mu.Lock()
	p.polls++
	n := p.polls
	p.mu.Unlock()
	if n > p.spin {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	var params map[string]any
	json.NewDecoder(r.Body).Decode(&params)
	r.Body.Close()
	params["timeout"] = 0 // the fake then answers at once
	body, _ := json.Marshal(params)
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return p.api.RoundTrip(r)
}

// TestPollPacesAnImpatientServer: a server that answers getUpdates at once
// with nothing is polled a few times a minute, not thousands of times a
// second; a message still arrives within maxPace, and once one has, the
// next is seen within the first pause.
func TestPollPacesAnImpatientServer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		imp := &impatient{api: api, spin: 1000}
		h := startBot(t, api, newFakeCore(), "", func(o *Options) { o.HTTPClient = &http.Client{Transport: imp} })
		time.Sleep(time.Minute)
		// 1+2+4+8 s, then every 10 s: 9 polls in a minute.
		if n := imp.count(); n > 12 || n < 6 {
			t.Errorf("%d polls in a minute of an idle bot; want about 9", n)
		}
		if n := strings.Count(h.logs.String(), "instead of holding the long poll"); n != 1 {
			t.Errorf("the pacing was logged %d times; want once:\n%s", n, h.logs.String())
		}

		start := time.Now()
		api.push(textMsg(owner, owner, "are you there?"))
		api.waitFor(t, "the reply", func() bool { return len(api.sent("echo: are you there?")) == 1 })
		if d := time.Since(start); d > maxPace {
			t.Errorf("the message waited %s; want at most %s", d, maxPace)
		}
		start = time.Now()
		api.push(textMsg(owner, owner, "and now?"))
		api.waitFor(t, "the reply", func() bool { return len(api.sent("echo: and now?")) == 1 })
		if d := time.Since(start); d > firstPace {
			t.Errorf("the next message waited %s; want at most %s (updates reset the pace)", d, firstPace)
		}
	})
}

// TestPollHeldIsNotPaced: a server that holds each poll (Telegram) is
// polled again as soon as a poll ends, and a burst of updates is taken in
// without a pause.
func TestPollHeldIsNotPaced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t) // polls are held PollTimeout, 1 s
		time.Sleep(time.Minute)
		if n := len(h.api.callsOf("getUpdates")); n < 59 || n > 62 {
			t.Errorf("%d polls in a minute held 1 s each; want 60", n)
		}
		start := time.Now()
		for i := range 5 {
			h.api.push(textMsg(owner, int64(1000+i), "burst"))
			h.api.waitFor(t, "the reply", func() bool { return len(h.api.sent("echo: burst")) == i+1 })
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("a burst of updates took %s; want no pause", d)
		}
		if strings.Contains(h.logs.String(), "instead of holding the long poll") {
			t.Error("a server that holds the poll was taken for one that does not")
		}
	})
}
