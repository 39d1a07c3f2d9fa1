package pytool

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

// sharedCache is a cache built once for the tests that gate many tools with one (the
// hostile tables, checkedWithCache); removed by TestMain.
var sharedCache = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pytool-cache-*")
	if err != nil {
		return "", err
	}
	sharedCacheDir = dir
	_, err = BuildGateCache(context.Background(), python, dir)
	return dir, err
})

var sharedCacheDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedCacheDir != "" {
		os.RemoveAll(sharedCacheDir)
	}
	os.Exit(code)
}

// checkedWithCache is Check, and also, for a tool Check refuses, Gate with the cache's
// analyses (sharedCache), which must refuse it with the very same problems: the hostile
// tables hold for the gate as the daemon runs it, with the analyses read from its cache.
func checkedWithCache(t *testing.T, name string, code, test []byte) (Meta, error) {
	t.Helper()
	meta, err := Check(context.Background(), python, name, code, test)
	var ce *CheckError
	if !canRun || !errors.As(err, &ce) {
		return meta, err
	}
	dir, cerr := sharedCache()
	if cerr != nil {
		t.Fatalf("BuildGateCache: %v", cerr)
	}
	_, rep, gerr := Gate(context.Background(), python, dir, t.TempDir(), name, code, test, 10*time.Second)
	if gerr == nil || gerr.Error() != err.Error() {
		t.Errorf("Gate with the cache = %v (%+v)\nCheck = %v", gerr, rep, err)
	}
	return meta, err
}
