package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type payload struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewConn(&buf, &buf, 0)
	want := payload{Text: "héllo\x00\u202e", N: 42}
	if err := c.Send(TypeJob, want); err != nil {
		t.Fatal(err)
	}
	if err := c.SendError(TypeResult, "boom"); err != nil {
		t.Fatal(err)
	}
	f, err := c.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var got payload
	if err := f.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	f, err = c.Recv()
	if err != nil || f.Type != TypeResult || f.Error != "boom" {
		t.Fatalf("error frame = %+v, %v", f, err)
	}
	if _, err := c.Recv(); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

// A 4 GiB declared length must be refused from the header alone: a few small
// allocations at most, never the body.
func TestOversizeRefusedBeforeAllocation(t *testing.T) {
	hdr := make([]byte, 4)
	binary.BigEndian.PutUint32(hdr, 0xFFFFFFFF)
	_, err := ReadFrame(bytes.NewReader(hdr), 1024)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		ReadFrame(bytes.NewReader(hdr), 1024)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing 100 oversize frames allocated %d bytes", grew)
	}
}

func TestSendRefusesOversize(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewConn(&buf, &buf, 64)
	err := c.Send(TypeJob, payload{Text: strings.Repeat("x", 100)})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes written for a refused frame", buf.Len())
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	frame := func(body string) []byte {
		b := make([]byte, 4+len(body))
		binary.BigEndian.PutUint32(b, uint32(len(body)))
		copy(b[4:], body)
		return b
	}
	cases := map[string][]byte{
		"truncated header": {0, 0},
		"truncated body":   frame(`{"type":"job"}`)[:8],
		"not json":         frame(`not json`),
		"no type":          frame(`{"body":{}}`),
		"json array":       frame(`[1,2]`),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadFrame(bytes.NewReader(in), 1024); err == nil || err == io.EOF {
				t.Fatalf("ReadFrame accepted %q: err=%v", in, err)
			}
		})
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0, 0, 0, 14, '{', '"', 't', 'y', 'p', 'e', '"', ':', '"', 'x', '"', '}', ' ', ' '})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := ReadFrame(bytes.NewReader(data), 4096)
		if err == nil && fr.Type == "" {
			t.Fatal("accepted a frame without a type")
		}
	})
}

// TestWriteBuildsOneFrame: a frame's body is encoded in place, HTML
// characters unescaped (a "<" costs one byte, not six), and a frame over
// the cap is refused before anything is written.
func TestWriteBuildsOneFrame(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewConn(&buf, &buf, 64)
	if err := c.SendReply(7, "<a&b>"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"body":"<a&b>"`)) {
		t.Errorf("frame %q: the body is escaped", buf.Bytes())
	}
	f, err := c.Recv()
	var got string
	if err != nil || f.Type != TypeReply || f.Seq != 7 || f.Decode(&got) != nil || got != "<a&b>" {
		t.Fatalf("frame %+v (%q), %v", f, got, err)
	}
	if err := c.Send(TypeEvent, strings.Repeat("x", 64)); !errors.Is(err, ErrTooLarge) || buf.Len() != 0 {
		t.Errorf("a frame over the cap: err %v, %d bytes written", err, buf.Len())
	}
}

// TestFramesTakeTheQuickPath: every frame Conn writes is read by
// quickFrame, not json.Unmarshal, and reads back as written.
func TestFramesTakeTheQuickPath(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := NewConn(&buf, &buf, 0)
	big := strings.Repeat(`a "quoted" <b>, \ and é `, 2000)
	sends := []func() error{
		func() error { return c.Send(TypeJob, payload{Text: big}) },
		func() error { return c.SendCall(1, MethodComplete, []any{1, "x", nil}) },
		func() error { return c.SendCall(math.MaxInt64/10, MethodFindTools, map[string]any{}) },
		func() error { return c.SendReply(42, nil) },
		func() error { return c.SendReplyError(-7, "no such tool") },
		func() error { return c.SendError(TypeResult, "worker: build tools") },
		func() error { return c.Send(TypeCancel, "") },
	}
	for i, send := range sends {
		if err := send(); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()[4:]
		q, ok := quickFrame(data)
		var std Frame
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !ok {
			t.Errorf("frame %d (%.80q) missed the quick path", i, data)
		}
		if q.Type != std.Type || q.Seq != std.Seq || q.Method != std.Method || q.Error != std.Error || !bytes.Equal(q.Body, std.Body) {
			t.Errorf("frame %d: quick %+v, json %+v", i, q, std)
		}
		buf.Reset()
	}
}

// FuzzQuickFrame: whatever quickFrame accepts, json.Unmarshal reads the
// same, unless the body is not JSON, which decoding it refuses.
func FuzzQuickFrame(f *testing.F) {
	for _, s := range []string{`{"type":"job","body":{"a":1}}`, `{"type":"reply","seq":12,"error":"x"}`,
		`{"type":"call","seq":-3,"method":"m","body":[1]}`, `{"type":"a","body":{},"type":"b"}`,
		`{"type":"a","seq":01}`, `{"type":"a","seq":1e3}`, `{"type":"a\u0062"}`, `{"type":"a","body": {} }`,
		`{"type":"a","seq":99999999999999999999}`, `{"type":"a","body":}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, ok := quickFrame(data)
		if !ok {
			return
		}
		if !json.Valid(q.Body) && len(q.Body) > 0 {
			var v any
			if (Frame{Type: q.Type, Body: q.Body}).Decode(&v) == nil {
				t.Fatalf("a body that is not JSON decoded: %q", q.Body)
			}
			return
		}
		var std Frame
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("quick read %q as %+v; json: %v", data, q, err)
		}
		if q.Type != std.Type || q.Seq != std.Seq || q.Method != std.Method || q.Error != std.Error ||
			!bytes.Equal(bytes.TrimSpace(q.Body), std.Body) {
			t.Fatalf("%q: quick %+v, json %+v", data, q, std)
		}
	})
}
