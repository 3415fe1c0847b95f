package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCancelledRequestsDoNotBreakSharedCommits: 64 concurrent POST /shipments, every other one
// from a client that hangs up at some point (before its write is queued, while it waits, while
// its savepoint runs). The writes share group commits; every request that stayed is answered
// 201, and the database holds exactly the shipments answered 201: a hang-up never undoes or
// fails a neighbour, and never leaves half of itself.
func TestCancelledRequestsDoNotBreakSharedCommits(t *testing.T) {
	e := newEnv(t)
	codes := make([]int, 64)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%2 == 1 {
				time.AfterFunc(time.Duration(i%16)*time.Millisecond, cancel)
			}
			req := httptest.NewRequest("POST", "/shipments", strings.NewReader(shipmentBody("CHEAPEST", "PDF"))).WithContext(ctx)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
			w := httptest.NewRecorder()
			e.api.ServeHTTP(w, req)
			codes[i] = w.Code
		}()
	}
	wg.Wait()
	created := 0
	for i, code := range codes {
		if code == http.StatusCreated {
			created++
		} else if i%2 == 0 {
			t.Errorf("request %d (not cancelled) answered %d", i, code)
		}
	}
	var stored int
	if err := e.sql.QueryRow(`SELECT COUNT(*) FROM shipments`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != created {
		t.Errorf("%d shipments stored, %d answered 201", stored, created)
	}
	t.Logf("%d of 64 created (%d cancelled requests made it)", created, created-32)
}
