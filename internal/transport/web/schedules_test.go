package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// memKeeper is a ScheduleKeeper in memory, its refusals classed as the
// app's are.
type memKeeper struct {
	mu        sync.Mutex
	schedules []core.ScheduleView
	inbox     []core.InboxItem
	by        []string
}

func (k *memKeeper) Schedules(context.Context) ([]core.ScheduleView, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []core.ScheduleView
	for _, v := range k.schedules {
		if v.State != "removed" {
			out = append(out, v)
		}
	}
	return out, nil
}

func (k *memKeeper) ScheduleAction(_ context.Context, id int64, action, by string) (core.ScheduleView, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, v := range k.schedules {
		if v.ID != id {
			continue
		}
		if v.State == "removed" {
			return core.ScheduleView{}, fmt.Errorf("%w: schedule %d was removed", ErrScheduleRefused, id)
		}
		k.schedules[i].State = map[string]string{SchedulePause: "paused", ScheduleResume: "active", ScheduleRemove: "removed"}[action]
		k.by = append(k.by, action+" "+by)
		return k.schedules[i], nil
	}
	return core.ScheduleView{}, fmt.Errorf("%w: no schedule %d", ErrNoSchedule, id)
}

func (k *memKeeper) Inbox(_ context.Context, unreadOnly bool) ([]core.InboxItem, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []core.InboxItem
	for _, it := range k.inbox {
		if !unreadOnly || !it.Read {
			out = append(out, it)
		}
	}
	return out, nil
}

func (k *memKeeper) MarkInboxRead(_ context.Context, upTo int64) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for i := range k.inbox {
		if k.inbox[i].ID <= upTo && !k.inbox[i].Read {
			k.inbox[i].Read = true
			n++
		}
	}
	return n, nil
}

func TestSchedulesAPI(t *testing.T) {
	t.Parallel()
	next := time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)
	k := &memKeeper{
		schedules: []core.ScheduleView{{ID: 1, When: "every 30m", Timezone: "UTC", Prompt: "water <b>the</b> plants", State: "active", NextRun: next}},
		inbox: []core.InboxItem{{ID: 1, Schedule: 1, Turn: 3, Text: "watered"}, {ID: 2, Schedule: 1, Turn: 4, Text: "watered again"},
			{ID: 3, Schedule: 1, Turn: 5, Text: "came later"}},
	}
	s, err := New(Options{Chat: &fakeCore{}, Schedules: k, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	auth := map[string]string{"Authorization": "Bearer " + token}

	for _, path := range []string{"/api/schedules", "/api/schedules/1", "/api/inbox"} {
		if status, _ := do(t, srv, "GET", path, nil, ""); status != 401 {
			t.Errorf("GET %s without the token: %d", path, status)
		}
	}
	status, out := do(t, srv, "GET", "/api/schedules", auth, "")
	list, _ := out["schedules"].([]any)
	if status != 200 || len(list) != 1 {
		t.Fatalf("GET /api/schedules = %d %v", status, out)
	}
	one := list[0].(map[string]any)
	// Data as it is: a client escapes for its own screen.
	if one["prompt"] != "water <b>the</b> plants" || one["next_run"] != "2025-06-02T08:00:00Z" || one["when"] != "every 30m" {
		t.Errorf("schedule = %v", one)
	}
	if _, ok := one["last_run_at"]; ok {
		t.Errorf("a schedule that never ran has a last_run_at: %v", one)
	}
	if status, out := do(t, srv, "GET", "/api/schedules/1", auth, ""); status != 200 || out["schedule"] == nil {
		t.Errorf("GET /api/schedules/1 = %d %v", status, out)
	}

	steps := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"unknown", "GET", "/api/schedules/7", "", 404, "no such schedule"},
		{"not an id", "GET", "/api/schedules/x", "", 404, "positive number"},
		{"pause", "POST", "/api/schedules/1/pause", "{}", 200, `"state":"paused"`},
		{"resume", "POST", "/api/schedules/1/resume", "", 200, `"state":"active"`},
		{"an unknown action", "POST", "/api/schedules/1/approve", "{}", 404, "actions: pause, resume, remove"},
		{"an unknown schedule", "POST", "/api/schedules/9/pause", "{}", 404, "no schedule 9"},
		{"remove", "POST", "/api/schedules/1/remove", "{}", 200, `"state":"removed"`},
		{"resume a removed one", "POST", "/api/schedules/1/resume", "{}", 409, "was removed"},
		{"unread", "GET", "/api/inbox", "", 200, `"text":"watered again"`},
		{"bad all", "GET", "/api/inbox?all=maybe", "", 400, "all is 1 or 0"},
		{"read without up_to", "POST", "/api/inbox/read", "{}", 400, "up_to"},
		{"read an unknown field", "POST", "/api/inbox/read", `{"upto":2}`, 400, "unknown field"},
		{"read up to 2", "POST", "/api/inbox/read", `{"up_to":2}`, 200, `"marked":2`},
		{"what came later is unread", "GET", "/api/inbox", "", 200, `"id":3,"read":false`},
		{"everything", "GET", "/api/inbox?all=1", "", 200, `"read":true`},
	}
	for _, st := range steps {
		status, out := do(t, srv, st.method, st.path, auth, st.body)
		if got := fmt.Sprint(jsonOf(t, out)); status != st.status || !strings.Contains(got, st.want) {
			t.Errorf("%s: %d %s, want %d with %q", st.name, status, got, st.status, st.want)
		}
	}
	if strings.Join(k.by, ",") != "pause http,resume http,remove http" {
		t.Errorf("actions = %v", k.by)
	}
	if status, out := do(t, srv, "GET", "/api/schedules", auth, ""); status != 200 || fmt.Sprint(out["schedules"]) != "[]" {
		t.Errorf("after removing: %d %v", status, out)
	}
}

// TestSchedulesAPIWithoutKeeper: a server with no schedules answers empty
// lists, never an error.
func TestSchedulesAPIWithoutKeeper(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Chat: &fakeCore{}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	auth := map[string]string{"Authorization": "Bearer " + token}
	if status, out := do(t, srv, "GET", "/api/schedules", auth, ""); status != 200 || fmt.Sprint(out["schedules"]) != "[]" {
		t.Errorf("GET /api/schedules = %d %v", status, out)
	}
	if status, out := do(t, srv, "GET", "/api/inbox", auth, ""); status != 200 || fmt.Sprint(out["inbox"]) != "[]" {
		t.Errorf("GET /api/inbox = %d %v", status, out)
	}
	if status, _ := do(t, srv, "POST", "/api/schedules/1/pause", auth, "{}"); status != 404 {
		t.Errorf("pause = %d", status)
	}
}

// jsonOf is v as JSON, for a test to look for a piece of it.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
