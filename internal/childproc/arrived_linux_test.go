package childproc

import (
	"os"
	"testing"
)

// TestJobArrived: the worker sees whether its job is in the pipe without
// reading it: not while the pipe is empty, yes once a byte is there (and
// it is still there to read), yes when the daemon has closed its end.
func TestJobArrived(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	arrived := jobArrived(r)
	if arrived() {
		t.Fatal("arrived with the pipe empty")
	}
	if _, err := w.Write([]byte{7}); err != nil {
		t.Fatal(err)
	}
	if !arrived() || !arrived() {
		t.Fatal("not arrived with a byte in the pipe")
	}
	var b [1]byte
	if n, err := r.Read(b[:]); n != 1 || b[0] != 7 {
		t.Fatalf("read %d %v %v: the byte was taken", n, b, err)
	}
	if arrived() {
		t.Fatal("arrived with the pipe read empty")
	}
	w.Close()
	if !arrived() {
		t.Fatal("not arrived with the pipe closed")
	}
}
