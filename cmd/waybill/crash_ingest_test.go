package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
)

// crashOrder is the payload of order i; the same i always gives the same bytes.
func crashOrder(i int) []byte {
	return []byte(fmt.Sprintf(`{"id":"CR-%d","name":"#%d","fulfillmentOrders":[{"id":"FO-%d","destination":{"firstName":"Ann",`+
		`"lastName":"Lee","address1":"%d Main St","city":"Austin","province":"TX","zip":"78701","countryCode":"US"},`+
		`"lineItems":[{"id":"LI-%d","weight":{"unit":"OUNCES","value":%d},"totalQuantity":1}]}]}`, i, i, i, i, i, i%50+1))
}

// importSender sends signed order imports and remembers which were accepted, under which id.
type importSender struct {
	org, secret string
	client      *http.Client

	mu       sync.Mutex
	accepted map[int]string // order index → import id
	statuses map[int]int    // order index → last 2xx status
}

// send posts order i to base; ok is false when no answer came (the server is down).
func (s *importSender) send(base string, i int) (ok bool, err error) {
	body := crashOrder(i)
	req, _ := http.NewRequest("POST", base+"/webhook/custom-orders", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingest.OrganizationHeader, s.org)
	req.Header.Set(ingest.SignatureHeader, ingest.Sign(s.secret, body))
	res, err := s.client.Do(req)
	if err != nil {
		return false, nil
	}
	defer res.Body.Close()
	var answer struct {
		Data struct{ ID, Status string } `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
		return false, nil // the connection died mid-answer
	}
	if res.StatusCode != http.StatusAccepted && res.StatusCode != http.StatusOK {
		return false, fmt.Errorf("order %d: status %d", i, res.StatusCode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, seen := s.accepted[i]; seen && prev != answer.Data.ID {
		return false, fmt.Errorf("order %d: import %s, earlier %s: a retry must get the same import", i, answer.Data.ID, prev)
	}
	s.accepted[i], s.statuses[i] = answer.Data.ID, res.StatusCode
	return true, nil
}

func (s *importSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.accepted)
}

// burst sends orders [from, to) with 8 clients; kill, when set, runs once after killAfter
// answers. It returns the orders that got no answer.
func (s *importSender) burst(t *testing.T, base string, from, to, killAfter int, kill func()) []int {
	t.Helper()
	var next atomic.Int64
	next.Store(int64(from))
	var answered atomic.Int64
	var once sync.Once
	var mu sync.Mutex
	var lost []int
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= to {
					return
				}
				ok, err := s.send(base, i)
				if err != nil {
					t.Error(err)
				}
				if !ok {
					mu.Lock()
					lost = append(lost, i)
					mu.Unlock()
					continue
				}
				if kill != nil && int(answered.Add(1)) == killAfter {
					once.Do(kill)
				}
			}
		}()
	}
	wg.Wait()
	return lost
}

// TestCrashDuringOrderImport kills the server with SIGKILL in the middle of a burst of imports
// and again while the worker is processing, restarts it on the same database, and checks that
// every accepted import ends PROCESSED with exactly one order per order id.
func TestCrashDuringOrderImport(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills server processes")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	acct, token := createAccount(t, dbPath, "Crash", "READ_ORDERS")
	s := &importSender{org: acct["organization_id"], secret: acct["ingest_secret"],
		client:   &http.Client{Timeout: 10 * time.Second},
		accepted: map[int]string{}, statuses: map[int]int{}}
	const burst1, burst2 = 300, 300

	killer := func(cmd *exec.Cmd) func() {
		return func() {
			cmd.Process.Kill() // SIGKILL: no shutdown, no flush
		}
	}

	// 1. SIGKILL in the middle of a burst of imports.
	base, cmd := startChild(t, dbPath)
	lost := s.burst(t, base, 0, burst1, burst1/3, killer(cmd))
	cmd.Wait()
	t.Logf("burst 1: %d accepted, %d without an answer when the server was killed", s.count(), len(lost))
	if len(lost) == 0 {
		t.Fatal("the kill came after the burst; it must land in the middle")
	}

	// 2. Restart; the sender retries what got no answer (at-least-once) and re-sends a few
	// accepted ones, which must be the same imports. Then another burst, killed while the
	// worker holds claims on imports it is processing (repeated until a kill lands so).
	sent := burst1
	var inFlight []string
	for round := 1; len(inFlight) == 0; round++ {
		// With group commit a claim is durable only from one commit to the next (the
		// completion follows in the next batch), a window of about one fsync: it takes rounds.
		if round > 25 {
			t.Fatal("no kill in 25 rounds landed while the worker held a claim")
		}
		base, cmd = startChild(t, dbPath)
		for _, i := range append(lost, 0, 1, 2) {
			if ok, err := s.send(base, i); !ok || err != nil {
				t.Fatalf("retry of order %d after the restart: ok %v, %v", i, ok, err)
			}
		}
		lost = s.burst(t, base, sent, sent+burst2, burst2/2, killer(cmd))
		cmd.Wait()
		sent += burst2
		inFlight = claimedImports(t, dbPath)
		t.Logf("round %d: killed with %d imports claimed by the worker, %d requests without an answer", round, len(inFlight), len(lost))
	}

	// 3. Restart once more, retry what got no answer, and wait for the worker: the imports the
	// killed process had claimed are claimed again when their lease expires.
	base, cmd = startChild(t, dbPath)
	for _, i := range lost {
		if ok, err := s.send(base, i); !ok || err != nil {
			t.Fatalf("retry of order %d after the restart: ok %v, %v", i, ok, err)
		}
	}
	total := sent
	deadline := time.Now().Add(60 * time.Second)
	for countOrders(t, base, token) < total {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s only %d of %d orders are processed", countOrders(t, base, token), total)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range inFlight {
		var imp struct {
			Data struct {
				Status   string `json:"status"`
				Attempts int    `json:"attempts"`
			} `json:"data"`
		}
		getJSON(t, base+"/order_imports/"+id, token, &imp)
		if imp.Data.Status != ingest.StatusProcessed || imp.Data.Attempts < 2 {
			t.Errorf("import %s, in flight at the kill, = %+v; want PROCESSED on a later attempt", id, imp.Data)
		}
	}
	if n := s.count(); n != total {
		t.Fatalf("%d orders accepted; want %d", n, total)
	}
	for i, id := range s.accepted {
		var imp struct {
			Data struct {
				OrderID  string `json:"order_id"`
				Status   string `json:"status"`
				Attempts int    `json:"attempts"`
			} `json:"data"`
		}
		getJSON(t, base+"/order_imports/"+id, token, &imp)
		if imp.Data.Status != ingest.StatusProcessed || imp.Data.OrderID != fmt.Sprintf("CR-%d", i) || imp.Data.Attempts < 1 {
			t.Errorf("import %s of order %d = %+v; want PROCESSED", id, i, imp.Data)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	// The database itself: one import per body, one order per order id, each from its import.
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var imports, orders, distinct, mismatched int
	r := db
	for _, q := range []struct {
		sql string
		n   *int
	}{
		{`SELECT COUNT(*) FROM order_imports`, &imports},
		{`SELECT COUNT(*) FROM orders`, &orders},
		{`SELECT COUNT(DISTINCT order_id) FROM orders`, &distinct},
		{`SELECT COUNT(*) FROM orders o JOIN order_imports i ON i.id = o.import_id WHERE i.order_id <> o.order_id OR i.status <> 'PROCESSED'`, &mismatched},
	} {
		if err := r.QueryRowContext(context.Background(), q.sql).Scan(q.n); err != nil {
			t.Fatal(err)
		}
	}
	if imports != total || orders != total || distinct != total || mismatched != 0 {
		t.Errorf("database: %d imports, %d orders, %d distinct order ids, %d mismatched; want %d, %d, %d, 0",
			imports, orders, distinct, mismatched, total, total, total)
	}
}

// claimedImports lists the imports a worker held a claim on, read from the database of a dead
// server.
func claimedImports(t *testing.T, dbPath string) []string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id FROM order_imports WHERE status = 'PROCESSING'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func getJSON(t *testing.T, url, token string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d", url, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// countOrders is the account's number of orders.
func countOrders(t *testing.T, base, token string) int {
	t.Helper()
	var l struct {
		Metadata struct {
			TotalCount int `json:"total_count"`
		} `json:"metadata"`
	}
	getJSON(t, base+"/orders?page_size=1", token, &l)
	return l.Metadata.TotalCount
}

// TestGracefulStopDuringOrderImport: on SIGTERM the server stops accepting, and the worker
// completes what it has claimed, so after a restart nothing waits for a lease to expire.
func TestGracefulStopDuringOrderImport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops server processes")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	acct, token := createAccount(t, dbPath, "Graceful", "READ_ORDERS")
	s := &importSender{org: acct["organization_id"], secret: acct["ingest_secret"],
		client: &http.Client{Timeout: 10 * time.Second}, accepted: map[int]string{}, statuses: map[int]int{}}

	base, cmd := startChild(t, dbPath)
	lost := s.burst(t, base, 0, 300, 150, func() { cmd.Process.Signal(syscall.SIGTERM) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the server exited with %v after SIGTERM; want 0", err)
	}
	t.Logf("stopped with %d accepted, %d refused or unanswered", s.count(), len(lost))
	if claimed := claimedImports(t, dbPath); len(claimed) > 0 {
		t.Errorf("%d imports still claimed after a graceful stop; want 0", len(claimed))
	}
	base, cmd = startChild(t, dbPath)
	for _, i := range lost {
		if ok, err := s.send(base, i); !ok || err != nil {
			t.Fatalf("retry of order %d: ok %v, %v", i, ok, err)
		}
	}
	// Well within the 10 s lease: nothing is left claimed by the stopped process.
	deadline := time.Now().Add(5 * time.Second)
	for countOrders(t, base, token) < 300 {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s only %d of 300 orders are processed", countOrders(t, base, token))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
}
