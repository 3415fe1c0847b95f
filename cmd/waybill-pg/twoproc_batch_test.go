package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// batchItems is a POST /batches body of n shipments bought CHEAPEST, item i referenced
// <tag>-<i>.
func batchItems(tag string, n int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"origin":{"name":"Acme","street1":"1 Main St","city":"Los Angeles","state":"CA","zip":"90058","country":"US"},`+
			`"destination":{"name":"Ann Lee","street1":"%d Congress Ave","city":"Austin","state":"TX","zip":"78701","country":"US"},`+
			`"parcel":{"length":10,"width":8,"height":4,"length_unit":"IN","weight":%d,"weight_unit":"OZ"},"custom_reference_1":"%s-%d"}`,
			i+1, i%40+1, tag, i)
	}
	return []byte(`{"buy":"CHEAPEST","shipments":[` + strings.Join(items, ",") + `]}`)
}

// TestTwoProcessesBatches runs two waybill-pg processes on one database, both working one batch
// queue: batches of two accounts are posted to both, B is killed with SIGKILL while it holds
// item claims, and A takes them over once their leases run out. Every batch completes with
// every item PURCHASED, and no item was worked twice into the database: exactly one shipment,
// one label and one LABEL_PURCHASED event per item, each the item's own.
func TestTwoProcessesBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	dbURL := freshSchema(t)
	bin := buildBinary(t)
	db := openSQL(t, dbURL)
	procs := startProcs(t, bin, dbURL, "A", "B")
	a, b := procs[0], procs[1]
	admin := strings.TrimSpace(strings.TrimPrefix(a.out.String()+b.out.String(), "token: "))
	c := &loadClient{client: &http.Client{Timeout: 20 * time.Second}}

	type account struct{ id, token string }
	accounts := make([]account, 2)
	for i := range accounts {
		var acct, tok struct {
			Data struct{ ID, Token string } `json:"data"`
		}
		if st, _ := c.do(a, admin, "POST", "/admin/accounts", nil, fmt.Appendf(nil, `{"name": "batch %d"}`, i), &acct); st != http.StatusCreated {
			t.Fatalf("create account: %d", st)
		}
		// A subscription, so each completion writes its BATCH_COMPLETED event (counted below).
		scopes := `{"scopes": ["WRITE_SHIPMENTS", "READ_SHIPMENTS", "WRITE_WEBHOOKS"]}`
		if st, _ := c.do(a, admin, "POST", "/admin/accounts/"+acct.Data.ID+"/tokens", nil, []byte(scopes), &tok); st != http.StatusCreated {
			t.Fatalf("create token: %d", st)
		}
		accounts[i] = account{acct.Data.ID, tok.Data.Token}
		for _, topic := range []string{"BATCH_COMPLETED", "LABEL_PURCHASED"} {
			body := fmt.Appendf(nil, `{"url": "http://127.0.0.1:9/%d", "topic": %q, "is_active": true}`, i, topic)
			if st, _ := c.do(b, accounts[i].token, "POST", "/webhooks", nil, body, nil); st != http.StatusCreated {
				t.Fatalf("create webhook: %d", st)
			}
		}
	}

	// Batches to both processes: account 0 posts a large one to each, account 1 a small one.
	type posted struct {
		acct    account
		id, tag string
		n       int
	}
	var batches []posted
	for i, spec := range []struct {
		acct int
		p    *proc
		n    int
	}{{0, a, 300}, {0, b, 300}, {1, b, 40}, {1, a, 40}} {
		var res struct {
			Data struct{ ID string } `json:"data"`
		}
		tag := fmt.Sprintf("T%d", i)
		if st, _ := c.do(spec.p, accounts[spec.acct].token, "POST", "/batches", nil, batchItems(tag, spec.n), &res); st != http.StatusAccepted {
			t.Fatalf("POST /batches to %s: %d", spec.p.name, st)
		}
		batches = append(batches, posted{accounts[spec.acct], res.Data.ID, tag, spec.n})
	}

	// Kill B while it holds claims: wait until a backend of B has one (a PROCESSING item whose
	// lease B's claim set), then SIGKILL it.
	ctx := context.Background()
	killed := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !killed; time.Sleep(2 * time.Millisecond) {
		var claimed, finished int
		err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN status = 'PROCESSING' THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN status IN ('CREATED', 'PURCHASED', 'FAILED') THEN 1 ELSE 0 END), 0) FROM batch_items`).Scan(&claimed, &finished)
		if err != nil {
			t.Fatal(err)
		}
		if claimed > 0 && finished > 50 {
			b.killed.Store(true)
			b.cmd.Process.Kill()
			b.cmd.Wait()
			killed = true
			t.Logf("killed B with %d items claimed, %d finished", claimed, finished)
		}
	}
	if !killed {
		t.Fatal("no moment with claims held came in 30 s")
	}

	// A finishes every batch, B's claims included once their leases end.
	for _, p := range batches {
		var got struct {
			Data struct {
				Status            string
				Purchased, Failed int
				Items             []struct {
					Index  int
					Status string
				}
			} `json:"data"`
		}
		ok := waitFor(90*time.Second, func() bool {
			c.do(a, p.acct.token, "GET", "/batches/"+p.id, nil, nil, &got)
			return got.Data.Status == "COMPLETED"
		})
		if !ok || got.Data.Purchased != p.n || got.Data.Failed != 0 || len(got.Data.Items) != p.n {
			t.Fatalf("batch %s: %s, %d purchased, %d failed, %d items; want COMPLETED, %d purchased", p.id, got.Data.Status,
				got.Data.Purchased, got.Data.Failed, len(got.Data.Items), p.n)
		}
	}
	if len(c.bad) > 0 {
		t.Errorf("answers of 500 or more:\n%s", strings.Join(c.bad, "\n"))
	}

	var items, shipments, labels, own, maxLabels, purchasedEvents, completedEvents int
	for _, q := range []struct {
		sql string
		n   *int
	}{
		{`SELECT COUNT(*) FROM batch_items`, &items},
		{`SELECT COUNT(*) FROM shipments`, &shipments},
		{`SELECT COUNT(*) FROM shipping_labels`, &labels},
		{`SELECT COUNT(*) FROM batch_items i JOIN shipments s ON s.id = i.shipment_id AND s.account_id = i.account_id
			JOIN shipping_labels l ON l.shipment_id = s.id
			JOIN batches bt ON bt.id = i.batch_id WHERE i.status = 'PURCHASED' AND s.custom_reference_1 LIKE '%-' || i.position`, &own},
		{`SELECT COALESCE(MAX(c), 0) FROM (SELECT COUNT(*) AS c FROM shipping_labels GROUP BY shipment_id) x`, &maxLabels},
		{`SELECT COUNT(*) FROM webhook_events WHERE topic = 'LABEL_PURCHASED'`, &purchasedEvents},
		{`SELECT COUNT(*) FROM webhook_events WHERE topic = 'BATCH_COMPLETED'`, &completedEvents},
	} {
		if err := db.QueryRowContext(ctx, q.sql).Scan(q.n); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	want := 0
	for _, p := range batches {
		want += p.n
	}
	if items != want || shipments != want || labels != want || own != want || maxLabels != 1 || purchasedEvents != want || completedEvents != len(batches) {
		t.Errorf("database: %d items, %d shipments, %d labels, %d items with their own shipment and label, at most %d labels per shipment, "+
			"%d LABEL_PURCHASED and %d BATCH_COMPLETED events; want %d, %d, %d, %d, 1, %d, %d",
			items, shipments, labels, own, maxLabels, purchasedEvents, completedEvents, want, want, want, want, want, len(batches))
	}
	a.stop(t)
}

// TestBatchOfAThousand times a batch of 1,000 shipments with purchase on one waybill-pg
// process, from the POST to COMPLETED (docs/performance.md): seconds, not minutes.
func TestBatchOfAThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dbURL := freshSchema(t)
	bin := buildBinary(t)
	p := startProcs(t, bin, dbURL, "A")[0]
	token := strings.TrimSpace(strings.TrimPrefix(p.out.String(), "token: "))
	c := &loadClient{client: &http.Client{Timeout: 20 * time.Second}}
	var res struct {
		Data struct {
			ID, Status        string
			Purchased, Failed int
		} `json:"data"`
	}
	start := time.Now()
	if st, _ := c.do(p, token, "POST", "/batches", nil, batchItems("K", 1000), &res); st != http.StatusAccepted {
		t.Fatalf("POST /batches: %d", st)
	}
	accepted, id := time.Since(start), res.Data.ID
	if !waitFor(60*time.Second, func() bool {
		c.do(p, token, "GET", "/batches/"+id, nil, nil, &res)
		return res.Data.Status == "COMPLETED"
	}) {
		t.Fatalf("a batch of 1,000 not COMPLETED after 60 s: %d purchased", res.Data.Purchased)
	}
	took := time.Since(start)
	if res.Data.Purchased != 1000 || len(c.bad) > 0 {
		t.Fatalf("%d purchased, %d failed (%v); want 1000 purchased", res.Data.Purchased, res.Data.Failed, c.bad)
	}
	t.Logf("PostgreSQL: 1,000 shipments created and bought: 202 after %v, COMPLETED after %v (%.0f items/s)",
		accepted.Round(time.Millisecond), took.Round(time.Millisecond), 1000/took.Seconds())
	p.stop(t)
}
