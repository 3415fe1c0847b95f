package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrashDuringWebhookDelivery kills the server (SIGKILL) while deliveries to a slow receiver
// are in flight, starts it again on the same database and shows every event DELIVERED: the
// deliveries cut off are retried once their lease runs out (within 30 s of the restart).
func TestCrashDuringWebhookDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a server process")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	_, token := createAccount(t, dbPath, "Crash", "READ_WEBHOOKS,WRITE_WEBHOOKS,ADMIN")

	var slow atomic.Bool
	slow.Store(true)
	var mu sync.Mutex
	started := map[string]int{}   // event id → deliveries begun
	delivered := map[string]int{} // event id → deliveries answered 200
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		started[id]++
		mu.Unlock()
		if slow.Load() {
			select { // long enough for the kill to land mid-delivery
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		mu.Lock()
		delivered[id]++
		mu.Unlock()
	}))
	defer recv.Close()

	flags := []string{"-webhook-allow-private", "-webhook-retry-schedule", "1s,1s,1s,1s,1s"}
	base, cmd := startChild(t, dbPath, flags...)
	var sub struct{ Data struct{ ID string } }
	if code := webhookCall(t, "POST", base+"/webhooks", token, map[string]any{"url": recv.URL + "/hook", "topic": "ZIP_COVERAGE_UPDATED"}, &sub); code != 201 {
		t.Fatalf("POST /webhooks = %d", code)
	}
	// Each new rate shopping profile is a zip_coverage change: one ZIP_COVERAGE_UPDATED event.
	const events = 10
	for i := 0; i < events; i++ {
		profile := map[string]any{"name": fmt.Sprintf("Crash %d", i), "carriers": []string{"POSTLINE"},
			"zip_coverage": map[string]any{"POSTLINE": []string{"900-961"}}}
		if code := webhookCall(t, "PUT", fmt.Sprintf("%s/admin/rate_shopping_profiles/crash-%d", base, i), token, profile, nil); code != 201 {
			t.Fatalf("PUT profile crash-%d = %d", i, code)
		}
	}
	// Wait for deliveries to be in flight, then kill the server in the middle of them.
	webhookWaitFor(t, 20*time.Second, "deliveries in flight", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(started) > 0
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	mu.Lock()
	inFlight := len(started)
	mu.Unlock()
	slow.Store(false)

	restart := time.Now()
	base, _ = startChild(t, dbPath, flags...)
	webhookWaitFor(t, 45*time.Second, "every event DELIVERED after the restart", func() bool {
		var l struct {
			Metadata struct {
				TotalCount int `json:"total_count"`
			}
		}
		webhookCall(t, "GET", base+"/webhooks/"+sub.Data.ID+"/events?status=DELIVERED", token, nil, &l)
		return l.Metadata.TotalCount == events
	})
	if d := time.Since(restart); d > 30*time.Second {
		t.Errorf("the deliveries cut off by the crash took %v after the restart; want within 30 s", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != events {
		t.Errorf("receiver acknowledged %d distinct events; want %d", len(delivered), events)
	}
	t.Logf("%d deliveries were in flight at the kill; all %d events delivered %v after the restart", inFlight, events, time.Since(restart).Round(time.Second))
}

// webhookCall sends a JSON request and decodes the answer into out (when not nil).
func webhookCall(t *testing.T, method, url, token string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, r)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

func webhookWaitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out after %v waiting for %s", limit, what)
}
