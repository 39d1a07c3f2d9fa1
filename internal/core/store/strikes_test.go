package store

import (
	"context"
	"testing"
	"time"
)

func TestStrikes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	for i := 1; i <= 3; i++ {
		n, err := s.AddStrike(ctx, "wc", 1, "timeout", now)
		if err != nil || n != i {
			t.Fatalf("strike %d: %d %v", i, n, err)
		}
	}
	if n, _ := s.Strikes(ctx, "wc", 2); n != 0 {
		t.Errorf("another version has %d strikes", n)
	}
	if err := s.ClearStrikes(ctx, "wc", 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Strikes(ctx, "wc", 1); n != 0 {
		t.Errorf("after clear: %d", n)
	}
}
