package provider

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func readAll(r io.Reader) ([]Event, error) {
	sse := NewSSEReader(r, 0)
	var evs []Event
	for {
		ev, err := sse.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []Event
	}{
		{"anthropic events", "event: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			[]Event{{Type: "ping", Data: `{"type": "ping"}`}, {Type: "message_stop", Data: `{"type":"message_stop"}`}}},
		{"openai data only", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"crlf", "event: e\r\ndata: x\r\n\r\n", []Event{{Type: "e", Data: "x"}}},
		{"lone cr", "data: x\rdata: y\r\r", []Event{{Data: "x\ny"}}},
		{"multi data", "data: a\ndata:b\ndata:  c\n\n", []Event{{Data: "a\nb\n c"}}},
		{"comments and unknown fields", ": keep-alive\nretry: 10\nfoo: bar\ndata: x\n\n: bye\n", []Event{{Data: "x"}}},
		{"no data is no event", "event: lonely\n\ndata: x\n\n", []Event{{Data: "x"}}},
		{"empty data", "data:\n\n", []Event{{Data: ""}}},
		{"field without colon", "data\n\n", []Event{{Data: ""}}},
		{"id", "id: 7\ndata: x\n\n", []Event{{Data: "x", ID: "7"}}},
		{"bom", "\xef\xbb\xbfdata: x\n\n", []Event{{Data: "x"}}},
		{"pending at eof", "data: [DONE]", []Event{{Data: "[DONE]"}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestSSEReaderCaps(t *testing.T) {
	t.Parallel()
	long := "data: " + strings.Repeat("x", MaxSSELine) + "\n\n"
	if _, err := readAll(strings.NewReader(long)); !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "a line of the model's reply exceeded 256 KiB") {
		t.Errorf("long line: err = %v, want a line over its cap", err)
	}
	line := "data: " + strings.Repeat("x", 1<<16) + "\n"
	many := strings.Repeat(line, MaxSSEEvent/(1<<16)+1) + "\n"
	if _, err := readAll(strings.NewReader(many)); !errors.Is(err, ErrReplyTooLarge) || !strings.Contains(err.Error(), "an event of the model's reply exceeded 256 KiB") {
		t.Errorf("big event: err = %v, want an event over its cap", err)
	}
	ok := "data: " + strings.Repeat("x", MaxSSELine-len("data: ")) + "\n\n"
	if evs, err := readAll(strings.NewReader(ok)); err != nil || len(evs) != 1 {
		t.Errorf("line at the cap: %d events, err %v", len(evs), err)
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := readAll(io.MultiReader(strings.NewReader("data: x\n\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "event: e\r\ndata: a\r\ndata: b\r\n\r\n", ": c\rdata\r\r", "id: \x00\ndata: [DONE]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, errA := readAll(strings.NewReader(in))
		b, errB := readAll(iotest.OneByteReader(strings.NewReader(in)))
		if (errA == nil) != (errB == nil) || !cmp.Equal(a, b) {
			t.Errorf("chunking changed the result: %v %v vs %v %v", a, errA, b, errB)
		}
	})
}
