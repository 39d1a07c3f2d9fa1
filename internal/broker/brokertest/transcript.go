package brokertest

// Recorded wire transcripts: each adapter's tests replay a provider's reply
// as it came over the wire and compare the request the adapter sent with a
// golden file. Both live in the adapter's testdata/ directory.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	update    = flag.Bool("update", false, "rewrite the golden testdata/*.request.json from what the adapter sends")
	rewritten sync.Map // golden files written in this run
)

// Exchange is the request a replay server received.
type Exchange struct {
	mu     sync.Mutex
	method string
	path   string
	header http.Header
	body   []byte
}

// Request returns what the server received.
func (e *Exchange) Request() (method, path string, header http.Header, body []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.method, e.path, e.header, e.body
}

// Replay starts a server that records the request and answers with the
// recorded reply testdata/<name>.response.http (an HTTP/1.1 response as on
// the wire), flushing the body line by line as a live server would.
func Replay(t testing.TB, name string) (*httptest.Server, *Exchange) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".response.http"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ex := &Exchange{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		ex.mu.Lock()
		ex.method, ex.path, ex.header, ex.body = r.Method, r.URL.Path, r.Header.Clone(), data
		ex.mu.Unlock()
		for k, v := range resp.Header {
			if k != "Content-Length" && k != "Transfer-Encoding" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		for _, line := range bytes.SplitAfter(body, []byte("\n")) {
			w.Write(line)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, ex
}

// CheckGolden compares a sent JSON body with testdata/<name>.request.json,
// ignoring key order and layout; with -update it rewrites the file.
func CheckGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".request.json")
	if *update {
		if _, done := rewritten.LoadOrStore(name, true); done {
			return // several cases share a golden file; the first writes it
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, got, "", "  "); err != nil {
			t.Fatalf("sent body is not JSON: %v", err)
		}
		buf.WriteByte('\n')
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("sent body is not JSON: %v", err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("request body differs from %s (-want +got):\n%s", path, diff)
	}
}
