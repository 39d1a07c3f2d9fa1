package skill

import (
	"errors"
	"strings"
	"testing"
)

// TestVersion: a kept version reads back as it was written; the current
// one, an unknown number and an invalid name are not kept versions.
func TestVersion(t *testing.T) {
	t.Parallel()
	l, _ := open(t, nil)
	if _, err := l.Create("deploy", "v1", "body 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update("deploy", "v2", "body 2"); err != nil {
		t.Fatal(err)
	}
	data, err := l.Version("deploy", 1)
	if err != nil || !strings.Contains(string(data), "description: v1") || !strings.Contains(string(data), "body 1") {
		t.Fatalf("version 1: %q %v", data, err)
	}
	for _, tc := range []struct {
		name string
		n    int
	}{{"deploy", 2}, {"deploy", 0}, {"deploy", -1}, {"other", 1}} {
		if _, err := l.Version(tc.name, tc.n); !errors.Is(err, ErrNotFound) {
			t.Errorf("Version(%q, %d): %v, want ErrNotFound", tc.name, tc.n, err)
		}
	}
	if _, err := l.Version("../deploy", 1); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Version of an invalid name: %v, want a name error", err)
	}
}
