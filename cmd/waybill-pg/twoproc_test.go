package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/webhook"
)

// proc is one waybill-pg process of the two-process test.
type proc struct {
	name     string // "A", "B", …; its connections' application_name is "waybill-" + name
	cmd      *exec.Cmd
	base     string
	out, err syncBuffer
	killed   atomic.Bool
}

var listening = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// startProcs starts one process per name together on one database and waits until all listen.
// Each process's connections carry application_name waybill-<name>, so the test tells their
// buildBinary builds waybill-pg into the test's temporary directory and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "waybill-pg")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// openSQL opens a plain pool on the database at url, closed when the test ends, for checking
// what the processes stored.
func openSQL(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// backends apart in pg_stat_activity.
func startProcs(t *testing.T, bin, dbURL string, names ...string) []*proc {
	t.Helper()
	var procs []*proc
	for _, name := range names {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("application_name", "waybill-"+name)
		u.RawQuery = q.Encode()
		p := &proc{name: name}
		p.cmd = exec.Command(bin, "serve", "-addr", "127.0.0.1:0", "-db", u.String(), "-webhook-allow-private",
			"-webhook-retry-schedule", "200ms,500ms,1s,1s,1s,1s,1s,1s")
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if p.cmd.ProcessState == nil {
				p.cmd.Process.Kill()
				p.cmd.Wait()
			}
			if t.Failed() {
				t.Logf("process %s stderr (tail):\n%s", p.name, tail(p.err.String(), 3000))
			}
		})
		procs = append(procs, p)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range procs {
		for {
			if m := listening.FindStringSubmatch(p.err.String()); m != nil {
				p.base = "http://" + m[1]
				break
			}
			if p.cmd.ProcessState != nil || time.Now().After(deadline) {
				t.Fatalf("process %s did not come up:\n%s", p.name, p.err.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return procs
}

// stop ends p with SIGTERM and checks that it shut down cleanly.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("process %s after SIGTERM: %v", p.name, err)
	}
	if strings.Contains(p.err.String(), `"level":"ERROR"`) {
		t.Errorf("process %s logged errors:\n%s", p.name, tail(p.err.String(), 3000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// loadClient sends the test's requests and records every answer of 500 or more.
type loadClient struct {
	client *http.Client

	mu   sync.Mutex
	bad  []string
	sent atomic.Int64
}

// do sends one request to p with token; ok is false when p gave no answer (a killed process
// may not).
func (c *loadClient) do(p *proc, token, method, path string, header map[string]string, body []byte, out any) (status int, ok bool) {
	req, _ := http.NewRequest(method, p.base+path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c.sent.Add(1)
	res, err := c.client.Do(req)
	if err != nil {
		if !p.killed.Load() {
			c.fail("%s %s on %s: %v", method, path, p.name, err)
		}
		return 0, false
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		if !p.killed.Load() {
			c.fail("%s %s on %s: reading the answer: %v", method, path, p.name, err)
		}
		return 0, false
	}
	if res.StatusCode >= 500 {
		c.fail("%s %s on %s: %d %s", method, path, p.name, res.StatusCode, data)
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			c.fail("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
	return res.StatusCode, true
}

func (c *loadClient) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bad = append(c.bad, fmt.Sprintf(format, args...))
}

// receiver is the loopback webhook endpoint: it counts the 2xx answers per webhook-id. While
// holding, it answers nothing until released; a held request whose sender hangs up (a killed
// process's connections close) is recorded as dropped, and not answered.
type receiver struct {
	mu      sync.Mutex
	first   map[string]time.Time // webhook-id → first answer
	count   map[string]int       // webhook-id → answers
	held    map[string]int       // URL path (one per subscription) → requests held now
	release chan struct{}        // non-nil while holding
	dropped map[string]time.Time // webhook-id → when its sender hung up while held
}

func newReceiver() *receiver {
	return &receiver{first: map[string]time.Time{}, count: map[string]int{}, held: map[string]int{},
		dropped: map[string]time.Time{}}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	io.Copy(io.Discard, req.Body) // read to the end, so the server notices the sender hang up
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if release := r.release; release != nil {
		r.held[req.URL.Path]++
		r.mu.Unlock()
		gone := false
		select {
		case <-release:
		case <-req.Context().Done():
			gone = true
		}
		r.mu.Lock()
		r.held[req.URL.Path]--
		if gone {
			r.dropped[id] = time.Now()
			return
		}
	}
	if _, ok := r.first[id]; !ok {
		r.first[id] = time.Now()
	}
	r.count[id]++
}

func (r *receiver) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.release = make(chan struct{})
}

func (r *receiver) unhold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.release)
	r.release = nil
}

// busiest is the most requests held now for one subscription.
func (r *receiver) busiest() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.held {
		n = max(n, h)
	}
	return n
}

// droppedSince lists the webhook-ids whose sender hung up after t.
func (r *receiver) droppedSince(t time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, at := range r.dropped {
		if !at.Before(t) {
			ids = append(ids, id)
		}
	}
	return ids
}

// waitFor polls cond every 20 ms until it holds (true) or d has passed (false).
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

const twoProcShipment = `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

func twoProcOrder(i int) []byte {
	return fmt.Appendf(nil, `{"id":"TP-%d","name":"#%d","fulfillmentOrders":[{"id":"FO-%d","destination":{"firstName":"Ann",`+
		`"address1":"%d Main St","city":"Austin","province":"TX","zip":"78701","countryCode":"US"},`+
		`"lineItems":[{"id":"LI-%d","weight":{"unit":"OUNCES","value":%d},"totalQuantity":1}]}]}`, i, i, i, i, i, i%50+1)
}

// loadAccount is one of the accounts the load runs on: one per load worker.
type loadAccount struct {
	id, token, org, secret string
}

// importClaim is an import a worker held the lease of when process B was killed.
type importClaim struct {
	id           string
	attempts     int
	claimedUntil int64
}

// TestTwoProcesses runs two waybill-pg processes, A and B, on one database under bounded mixed
// load through both: four accounts each create shipments, buy each with one Idempotency-Key
// sent to both processes at once, post tracking events that deliver (and bill) the labels,
// send signed imports to both, and receive webhook deliveries on a loopback receiver. Halfway,
// with B caught holding leases (webhook deliveries in flight, order-import claims it is
// completing), B is killed with SIGKILL. Then: no 5xx; every accepted import processed once
// into one order; every event delivered, a second time only if first received before the
// kill; one label and one LABEL_PURCHASED event per bought shipment; each delivered label
// billed once; B's leases taken over by A once they ran out. Last, the accounts' DRAFT
// invoices are moved into last month (the clock cannot be), and two fresh processes start
// together: their closers finalize each ended DRAFT exactly once, totals equal the live items
// and invoice numbers are gapless.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes under load")
	}
	start := time.Now()
	dbURL := freshSchema(t)
	bin := buildBinary(t)
	db := openSQL(t, dbURL)
	ctx := context.Background()

	procs := startProcs(t, bin, dbURL, "A", "B")
	a, b := procs[0], procs[1]
	if n := strings.Count(a.out.String()+b.out.String(), "token: "); n != 1 {
		t.Fatalf("%d processes printed the first start's token; want exactly 1", n)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(a.out.String()+b.out.String(), "token: "))

	c := &loadClient{client: &http.Client{Timeout: 20 * time.Second}}
	recv := newReceiver()
	hooks := httptest.NewServer(recv)
	defer hooks.Close()
	const workers, perWorker, afterKill = 4, 10, 4
	accounts := make([]loadAccount, workers)
	for i := range accounts {
		var raw struct {
			Data map[string]any `json:"data"`
		}
		body := fmt.Appendf(nil, `{"name": "load %d"}`, i)
		if st, _ := c.do(procs[i%2], admin, "POST", "/admin/accounts", nil, body, &raw); st != http.StatusCreated {
			t.Fatalf("create account: %d", st)
		}
		acct := &accounts[i]
		acct.id, acct.org, acct.secret = fmt.Sprint(raw.Data["id"]), fmt.Sprint(raw.Data["organization_id"]), fmt.Sprint(raw.Data["ingest_secret"])
		scopes, _ := json.Marshal(map[string][]string{"scopes": httpapi.AllScopes})
		var tok struct {
			Data struct{ Token string } `json:"data"`
		}
		if st, _ := c.do(procs[i%2], admin, "POST", "/admin/accounts/"+acct.id+"/tokens", nil, scopes, &tok); st != http.StatusCreated {
			t.Fatalf("create token: %d", st)
		}
		acct.token = tok.Data.Token
		for _, topic := range []string{"LABEL_PURCHASED", "LABEL_IN_TRANSIT", "LABEL_TRACKING_UPDATED"} {
			body, _ := json.Marshal(map[string]string{"url": fmt.Sprintf("%s/%d/%s", hooks.URL, i, topic), "topic": topic})
			if st, _ := c.do(procs[(i+1)%2], acct.token, "POST", "/webhooks", nil, body, nil); st != http.StatusCreated {
				t.Fatalf("create webhook: %d", st)
			}
		}
	}

	// The kill. With the receiver holding every delivery, wait until one subscription has more
	// in flight than one process may have (webhook.DefaultPerSubscription): B holds leases on
	// deliveries. With the orders table locked, wait until a backend of B waits on it: B is
	// completing import claims. Then SIGKILL B, note which claims were held, and let go.
	var (
		killedAt  time.Time
		killed    = make(chan struct{})
		halfway   = make(chan struct{})
		heldByB   []string                   // webhook-ids B was delivering
		leaseEnd  = map[string]int64{}       // their lease_until
		claims    = map[string]importClaim{} // imports PROCESSING at the kill
		killerErr error
	)
	go func() {
		defer close(killed)
		<-halfway
		fail := func(format string, args ...any) { killerErr = fmt.Errorf(format, args...) }
		recv.hold()
		released := false
		defer func() {
			if !released {
				recv.unhold()
			}
		}()
		if !waitFor(5*time.Second, func() bool { return recv.busiest() > webhook.DefaultPerSubscription }) {
			fail("no subscription got more than %d deliveries in flight within 5 s", webhook.DefaultPerSubscription)
		}
		lock, err := db.BeginTx(ctx, nil)
		if err != nil {
			fail("%v", err)
			return
		}
		defer lock.Rollback()
		if _, err := lock.Exec(`LOCK TABLE orders IN SHARE MODE`); err != nil {
			fail("%v", err)
			return
		}
		if !waitFor(3*time.Second, func() bool {
			var n int
			db.QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'waybill-B'
				AND wait_event_type = 'Lock' AND query LIKE '%INTO orders%'`).Scan(&n)
			return n > 0
		}) && killerErr == nil {
			fail("process B did not complete an import claim within 3 s")
		}
		b.killed.Store(true)
		killedAt = time.Now()
		b.cmd.Process.Kill() // SIGKILL
		b.cmd.Wait()
		rows, err := db.Query(`SELECT id, attempts, claimed_until FROM order_imports WHERE status = $1`, ingest.StatusProcessing)
		if err != nil {
			fail("%v", err)
			return
		}
		for rows.Next() {
			var cl importClaim
			rows.Scan(&cl.id, &cl.attempts, &cl.claimedUntil)
			claims[cl.id] = cl
		}
		rows.Close()
		lock.Rollback()
		// B's connections are closed: the receiver sees its held requests hang up.
		waitFor(2*time.Second, func() bool { return len(recv.droppedSince(killedAt)) > 0 })
		time.Sleep(300 * time.Millisecond)
		heldByB = recv.droppedSince(killedAt)
		for _, id := range heldByB {
			var until sql.NullInt64
			db.QueryRow(`SELECT lease_until FROM webhook_events WHERE id = $1`, id).Scan(&until)
			leaseEnd[id] = until.Int64
		}
		recv.unhold()
		released = true
	}()

	var (
		mu        sync.Mutex
		imports   = map[string]string{} // payload id → import id
		labels    = map[string]string{} // shipment id → label id
		delivered = map[string]bool{}   // labels whose DELIVERED event was answered 2xx
		uncertain = map[string]bool{}   // labels whose tracking event the killed process took unanswered
		done      atomic.Int64
		halfOnce  sync.Once
		wg        sync.WaitGroup
	)
	loadDeadline := time.Now().Add(30 * time.Second)
	for w := range workers {
		acct := accounts[w]
		wg.Add(1)
		go func() {
			defer wg.Done()
			extra := 0
			for i := 0; ; i++ {
				select {
				case <-killed:
					if i >= perWorker {
						extra++
					}
				default:
				}
				if extra > afterKill {
					return
				}
				if time.Now().After(loadDeadline) {
					c.fail("worker %d: the load did not end within 30 s", w)
					return
				}
				if done.Add(1) == workers*perWorker/2 {
					halfOnce.Do(func() { close(halfway) })
				}
				n := w*1000 + i
				p, q := procs[n%2], procs[(n+1)%2]
				if p.killed.Load() {
					p = a
				}
				// A shipment, bought with one Idempotency-Key on both processes at once.
				var s struct {
					Data struct {
						ID            string
						ShippingRates []struct{ ID string } `json:"shipping_rates"`
					}
				}
				if st, ok := c.do(p, acct.token, "POST", "/shipments", nil, []byte(twoProcShipment), &s); !ok || st != http.StatusCreated {
					continue
				}
				path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID
				key := map[string]string{"Idempotency-Key": fmt.Sprint("buy-", n)}
				var bought [2]struct {
					Data struct {
						Label struct {
							ID           string
							TrackingCode string `json:"tracking_code"`
						} `json:"shipping_label"`
					}
				}
				var bw sync.WaitGroup
				var statuses [2]int
				for j, target := range []*proc{p, q} {
					bw.Add(1)
					go func() {
						defer bw.Done()
						statuses[j], _ = c.do(target, acct.token, "POST", path, key, []byte(`{}`), &bought[j])
					}()
				}
				bw.Wait()
				label := bought[0].Data.Label
				if l2 := bought[1].Data.Label; label.ID != "" && l2.ID != "" && l2.ID != label.ID {
					c.fail("shipment %s: two labels %s and %s for one Idempotency-Key", s.Data.ID, label.ID, l2.ID)
				}
				// One buy under one key answers both: the one that lost the race replays it.
				if statuses[0]+statuses[1] == http.StatusOK+http.StatusUnprocessableEntity && statuses[0] != statuses[1] {
					c.fail("shipment %s: one Idempotency-Key answered %d and %d; want the purchase twice", s.Data.ID, statuses[0], statuses[1])
				}
				if label.ID == "" {
					label = bought[1].Data.Label
				}
				if label.ID == "" {
					continue
				}
				mu.Lock()
				labels[s.Data.ID] = label.ID
				mu.Unlock()
				// Tracking, after the purchase: in transit, then delivered (which bills the label).
				st, answered := 0, false
				at := time.Now().UTC()
				for k, status := range []string{"IN_TRANSIT", "DELIVERED"} {
					ev, _ := json.Marshal(map[string]any{"tracking_code": label.TrackingCode, "status": status,
						"occurred_at": at.Add(time.Duration(k) * time.Millisecond).Format(time.RFC3339Nano), "message": status})
					if st, answered = c.do(p, admin, "POST", "/admin/tracking_events", nil, ev, nil); !answered || st >= 300 {
						break
					}
				}
				mu.Lock()
				switch {
				case answered && st < 300:
					delivered[label.ID] = true
				case answered:
					c.fail("tracking label %s: %d", label.ID, st)
				default:
					uncertain[label.ID] = true
				}
				mu.Unlock()
				// A signed import, sent to both processes.
				body := twoProcOrder(n)
				sig := map[string]string{ingest.OrganizationHeader: acct.org, ingest.SignatureHeader: ingest.Sign(acct.secret, body)}
				for _, target := range []*proc{p, q} {
					var imp struct{ Data struct{ ID string } }
					if st, answered := c.do(target, acct.token, "POST", "/webhook/custom-orders", sig, body, &imp); answered && st < 300 {
						mu.Lock()
						if prev, seen := imports[fmt.Sprint("TP-", n)]; seen && prev != imp.Data.ID {
							c.fail("order TP-%d: imports %s and %s", n, prev, imp.Data.ID)
						}
						imports[fmt.Sprint("TP-", n)] = imp.Data.ID
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	<-killed
	if killerErr != nil {
		t.Fatalf("catching process B holding leases: %v", killerErr)
	}
	loadEnd := time.Now()
	t.Logf("%d requests; %d shipments bought, %d delivered (%d unanswered), %d imports accepted; B killed holding %d deliveries and up to %d import claims",
		c.sent.Load(), len(labels), len(delivered), len(uncertain), len(imports), len(heldByB), len(claims))

	// Every accepted import ends PROCESSED; A completes B's claims once their leases run out.
	deadline := time.Now().Add(40 * time.Second)
	for {
		var left int
		if err := db.QueryRow(`SELECT COUNT(*) FROM order_imports WHERE status <> $1`, ingest.StatusProcessed).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d imports not PROCESSED", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every event is delivered, B's held ones by A once their leases ran out.
	for {
		var left int
		if err := db.QueryRow(`SELECT COUNT(*) FROM webhook_events WHERE status <> 'DELIVERED'`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events not DELIVERED", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	takeover := time.Since(loadEnd)
	a.stop(t)

	// Imports: each accepted once, processed once into its one order (an order applied twice
	// would have moved its updated_at), and the claims B held taken over by A: claimed a second
	// time after their lease ran out.
	type importRow struct {
		attempts    int
		processedAt int64
		orders      int
		applied     bool
	}
	rows, err := db.Query(`SELECT i.id, i.attempts, i.processed_at, COUNT(o.id), COALESCE(BOOL_AND(o.created_at = o.updated_at), FALSE)
		FROM order_imports i LEFT JOIN orders o ON o.import_id = i.id GROUP BY i.id, i.attempts, i.processed_at`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]importRow{}
	for rows.Next() {
		var id string
		var r importRow
		if err := rows.Scan(&id, &r.attempts, &r.processedAt, &r.orders, &r.applied); err != nil {
			t.Fatal(err)
		}
		got[id] = r
	}
	rows.Close()
	if len(got) != len(imports) {
		t.Errorf("%d imports stored; %d accepted", len(got), len(imports))
	}
	for payload, id := range imports {
		if r := got[id]; r.orders != 1 || !r.applied {
			t.Errorf("import %s (%s): %d orders (applied once: %v); want 1", id, payload, r.orders, r.applied)
		}
	}
	takenOver := 0
	for id, cl := range claims {
		switch r := got[id]; r.attempts {
		case cl.attempts: // completed by A, whose claim it was
		case cl.attempts + 1:
			takenOver++
			if r.processedAt < cl.claimedUntil {
				t.Errorf("import %s: claimed again and processed at %d, before its lease ran out (%d)", id, r.processedAt, cl.claimedUntil)
			}
		default:
			t.Errorf("import %s: %d claims; %d when B was killed", id, r.attempts, cl.attempts)
		}
	}
	if takenOver == 0 {
		t.Errorf("none of the %d import claims held at the kill was claimed again; B was completing some", len(claims))
	}

	// Events: each received; twice only if first received before the kill; those B was
	// delivering received once, by A, after their lease ran out.
	var events []string
	rows, err = db.Query(`SELECT id FROM webhook_events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		events = append(events, id)
	}
	rows.Close()
	recv.mu.Lock()
	dup := 0
	for _, id := range events {
		switch n := recv.count[id]; {
		case n == 0:
			t.Errorf("event %s DELIVERED but never received", id)
		case n > 1 && recv.first[id].After(killedAt):
			t.Errorf("event %s received %d times, first after the kill", id, n)
		case n > 1:
			dup++
		}
	}
	if len(heldByB) == 0 {
		t.Error("B held no delivery when killed")
	}
	for _, id := range heldByB {
		switch until := time.UnixMicro(leaseEnd[id]); {
		case !until.After(killedAt):
			t.Errorf("event %s: B's connection dropped, but no lease held at the kill (lease_until %v)", id, until)
		case recv.count[id] != 1:
			t.Errorf("event %s, held by B: received %d times after the kill; want 1", id, recv.count[id])
		case recv.first[id].Before(until):
			t.Errorf("event %s, held by B until %v: received at %v, before the lease ran out", id, until, recv.first[id])
		}
	}
	recv.mu.Unlock()
	var purchased, labelRows int
	db.QueryRow(`SELECT COUNT(*) FROM webhook_events WHERE topic = 'LABEL_PURCHASED'`).Scan(&purchased)
	db.QueryRow(`SELECT COUNT(*) FROM shipping_labels`).Scan(&labelRows)
	if labelRows < len(labels) || purchased != labelRows {
		t.Errorf("%d labels stored, %d LABEL_PURCHASED events, %d purchases answered; want one label and one event per purchase",
			labelRows, purchased, len(labels))
	}

	// Each delivered label billed once (billing_line_items.label_id is UNIQUE), and no other.
	rows, err = db.Query(`SELECT label_id FROM billing_line_items WHERE type = 'POSTAGE' AND deleted_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	billed := map[string]bool{}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		billed[id] = true
	}
	rows.Close()
	for id := range delivered {
		if !billed[id] {
			t.Errorf("label %s delivered but not billed", id)
		}
	}
	for id := range billed {
		if !delivered[id] && !uncertain[id] {
			t.Errorf("label %s billed but not delivered", id)
		}
	}

	// The closers. The load billed this month's DRAFT of each account; move them into last
	// month, then two fresh processes start together and both closers find them ended.
	last := time.Now().UTC().AddDate(0, 0, -time.Now().UTC().Day()) // last day of last month
	res, err := db.Exec(`UPDATE invoices SET period_start = $1, period_end = $2 WHERE status = 'DRAFT'`,
		last.Format("2006-01")+"-01", last.Format("2006-01-02"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(accounts)) {
		t.Fatalf("%d DRAFT invoices after the load; want one per account (%d)", n, len(accounts))
	}
	closers := startProcs(t, bin, dbURL, "C", "D")
	// A finalize commits, then draws and stores the documents: both are waited for.
	if !waitFor(20*time.Second, func() bool {
		var n int
		db.QueryRow(`SELECT COUNT(*) FROM invoices i WHERE i.status = 'DRAFT'
			OR NOT EXISTS (SELECT 1 FROM invoice_documents d WHERE d.invoice_id = i.id)`).Scan(&n)
		return n == 0
	}) {
		t.Fatal("ended DRAFTs, or finalized invoices without their documents, left after the closers ran")
	}
	for _, p := range closers {
		p.stop(t)
	}
	// Finalized once: OPEN, unchanged since (updated_at is finalized_at), its documents drawn
	// after it was (they are drawn once the finalize commits and kept, so a second finalize
	// would leave finalized_at after them). Totals equal the live items; numbers
	// gapless.
	rows, err = db.Query(`SELECT i.invoice_number, i.status, i.total_cents, i.finalized_at = i.updated_at AND d.created_at >= i.finalized_at,
			(SELECT COALESCE(SUM(b.total_cents), 0) FROM billing_line_items b WHERE b.invoice_id = i.id AND b.deleted_at IS NULL)
		FROM invoices i LEFT JOIN invoice_documents d ON d.invoice_id = i.id`)
	if err != nil {
		t.Fatal(err)
	}
	seqs := map[string][]int{} // year → sequence numbers
	finalized := 0
	for rows.Next() {
		var number, status string
		var total, items int64
		var once sql.NullBool
		if err := rows.Scan(&number, &status, &total, &once, &items); err != nil {
			t.Fatal(err)
		}
		if status != "OPEN" || !once.Bool {
			t.Errorf("invoice %s: %s, finalized once %v; want OPEN, finalized once", number, status, once.Bool)
		} else {
			finalized++
		}
		if total != items {
			t.Errorf("invoice %s: total %d; live items sum to %d", number, total, items)
		}
		var year string
		var seq int
		if _, err := fmt.Sscanf(strings.ReplaceAll(number, "-", " "), "INV %s %d", &year, &seq); err != nil {
			t.Fatalf("invoice number %q: %v", number, err)
		}
		seqs[year] = append(seqs[year], seq)
	}
	rows.Close()
	for year, s := range seqs {
		slices.Sort(s)
		if s[0] != 1 || s[len(s)-1] != len(s) {
			t.Errorf("invoice numbers of %s: %v; want 1…%d", year, s, len(s))
		}
	}

	c.mu.Lock()
	for _, bad := range c.bad {
		t.Error(bad)
	}
	c.mu.Unlock()
	t.Logf("%d events delivered (%d twice, first before the kill); %d of B's deliveries and %d of its import claims taken over by A; "+
		"load %v, takeover %v; %d ended DRAFTs finalized by two closers; %v in all",
		len(events), dup, len(heldByB), takenOver, loadEnd.Sub(start).Round(time.Millisecond), takeover.Round(time.Millisecond),
		finalized, time.Since(start).Round(time.Millisecond))
}
