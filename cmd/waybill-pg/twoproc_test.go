package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
)

// proc is one waybill-pg process of the two-process test.
type proc struct {
	name     string
	cmd      *exec.Cmd
	base     string
	out, err syncBuffer
	killed   atomic.Bool
}

var listening = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// startProcs starts the binary n times together on one database and waits until all listen.
func startProcs(t *testing.T, bin, url string, n int) []*proc {
	t.Helper()
	var procs []*proc
	for i := range n {
		p := &proc{name: fmt.Sprint("process ", string(rune('A'+i)))}
		p.cmd = exec.Command(bin, "serve", "-addr", "127.0.0.1:0", "-db", url, "-webhook-allow-private",
			"-webhook-retry-schedule", "200ms,500ms,1s,1s,1s,1s,1s,1s")
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			p.cmd.Process.Kill()
			p.cmd.Wait()
			if t.Failed() {
				t.Logf("%s stderr (tail):\n%s", p.name, tail(p.err.String(), 3000))
			}
		})
		procs = append(procs, p)
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range procs {
		for {
			if m := listening.FindStringSubmatch(p.err.String()); m != nil {
				p.base = "http://" + m[1]
				break
			}
			if p.cmd.ProcessState != nil || time.Now().After(deadline) {
				t.Fatalf("%s did not come up:\n%s", p.name, p.err.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return procs
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// loadClient sends the test's requests and records every answer of 500 or more.
type loadClient struct {
	t      *testing.T
	client *http.Client
	token  string

	mu   sync.Mutex
	bad  []string
	sent atomic.Int64
}

// do sends one request to p; ok is false when p gave no answer (a killed process may not).
func (c *loadClient) do(p *proc, method, path string, header map[string]string, body []byte, out any) (status int, ok bool) {
	req, _ := http.NewRequest(method, p.base+path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
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

// receiver is the loopback webhook endpoint: it counts the 2xx answers per webhook-id.
type receiver struct {
	mu    sync.Mutex
	first map[string]time.Time
	count map[string]int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	io.Copy(io.Discard, req.Body)
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.first[id]; !ok {
		r.first[id] = time.Now()
	}
	r.count[id]++
}

const twoProcShipment = `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

func twoProcOrder(i int) []byte {
	return fmt.Appendf(nil, `{"id":"TP-%d","name":"#%d","fulfillmentOrders":[{"id":"FO-%d","destination":{"firstName":"Ann",`+
		`"address1":"%d Main St","city":"Austin","province":"TX","zip":"78701","countryCode":"US"},`+
		`"lineItems":[{"id":"LI-%d","weight":{"unit":"OUNCES","value":%d},"totalQuantity":1}]}]}`, i, i, i, i, i, i%50+1)
}

// TestTwoProcesses runs two waybill-pg processes on one database under bounded mixed load
// through both (creates, buys with the same Idempotency-Key sent to both, tracking events that
// deliver and bill labels, signed imports sent to both, webhook deliveries to a loopback
// receiver), kills one with SIGKILL halfway, and checks: no 5xx, every accepted import
// processed once into one order, every event delivered (a second delivery only of events the
// killed process may have sent before dying), no label bought twice, each delivered label
// billed once, every invoice's total the sum of its live items, numbers gapless.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes under load")
	}
	url := freshSchema(t)
	bin := filepath.Join(t.TempDir(), "waybill-pg")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	procs := startProcs(t, bin, url, 2)
	a, b := procs[0], procs[1]
	if n := strings.Count(a.out.String()+b.out.String(), "token: "); n != 1 {
		t.Fatalf("%d processes printed the first start's token; want exactly 1", n)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(a.out.String()+b.out.String(), "token: "))

	c := &loadClient{t: t, client: &http.Client{Timeout: 20 * time.Second}, token: admin}
	var raw struct {
		Data map[string]any `json:"data"`
	}
	if st, _ := c.do(a, "POST", "/admin/accounts", nil, []byte(`{"name": "load"}`), &raw); st != http.StatusCreated {
		t.Fatalf("create account: %d", st)
	}
	org, secret, acctID := fmt.Sprint(raw.Data["organization_id"]), fmt.Sprint(raw.Data["ingest_secret"]), fmt.Sprint(raw.Data["id"])
	scopes, _ := json.Marshal(map[string][]string{"scopes": httpapi.AllScopes})
	var tok struct {
		Data struct{ Token string } `json:"data"`
	}
	if st, _ := c.do(a, "POST", "/admin/accounts/"+acctID+"/tokens", nil, scopes, &tok); st != http.StatusCreated {
		t.Fatalf("create token: %d", st)
	}
	c.token = tok.Data.Token

	recv := &receiver{first: map[string]time.Time{}, count: map[string]int{}}
	hooks := httptest.NewServer(recv)
	defer hooks.Close()
	var subs []string
	for _, topic := range []string{"LABEL_PURCHASED", "LABEL_IN_TRANSIT", "LABEL_TRACKING_UPDATED"} {
		var sub struct{ Data struct{ ID string } }
		body, _ := json.Marshal(map[string]string{"url": hooks.URL + "/" + topic, "topic": topic})
		if st, _ := c.do(b, "POST", "/webhooks", nil, body, &sub); st != http.StatusCreated {
			t.Fatalf("create webhook: %d", st)
		}
		subs = append(subs, sub.Data.ID)
	}

	const workers, perWorker = 4, 12
	var done atomic.Int64
	var killedAt time.Time
	var killOnce sync.Once
	kill := func() {
		killOnce.Do(func() {
			b.killed.Store(true)
			killedAt = time.Now()
			b.cmd.Process.Kill() // SIGKILL
		})
	}
	var mu sync.Mutex
	imports := map[string]string{} // payload id → import id
	labels := map[string]string{}  // shipment id → label id
	delivered, uncertain := 0, 0   // labels delivered; DELIVERED events the killed process may have taken unanswered
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				n := w*perWorker + i
				if done.Add(1) == workers*perWorker/2 {
					kill()
				}
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
				if st, ok := c.do(p, "POST", "/shipments", nil, []byte(twoProcShipment), &s); !ok || st != http.StatusCreated {
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
				for j, target := range []*proc{p, q} {
					bw.Add(1)
					go func() { defer bw.Done(); c.do(target, "POST", path, key, []byte(`{}`), &bought[j]) }()
				}
				bw.Wait()
				label := bought[0].Data.Label
				if l2 := bought[1].Data.Label; label.ID != "" && l2.ID != "" && l2.ID != label.ID {
					c.fail("shipment %s: two labels %s and %s for one Idempotency-Key", s.Data.ID, label.ID, l2.ID)
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
				// Tracking: in transit, then delivered (which bills the label).
				st := 0
				answered := false
				at := time.Now().UTC()
				if n%3 == 0 {
					at = at.AddDate(0, 0, -40) // billed on a past period's DRAFT, which has ended
				}
				for k, status := range []string{"IN_TRANSIT", "DELIVERED"} {
					ev, _ := json.Marshal(map[string]any{"tracking_code": label.TrackingCode, "status": status,
						"occurred_at": at.Add(time.Duration(k) * time.Second).Format(time.RFC3339), "message": status})
					if st, answered = c.do(p, "POST", "/admin/tracking_events", nil, ev, nil); !answered || st >= 300 {
						break
					}
				}
				mu.Lock()
				switch {
				case answered && st < 300:
					delivered++
				case !answered:
					uncertain++
				}
				mu.Unlock()
				// A signed import, sent to both processes.
				body := twoProcOrder(n)
				sig := map[string]string{ingest.OrganizationHeader: org, ingest.SignatureHeader: ingest.Sign(secret, body)}
				for _, target := range []*proc{p, q} {
					var imp struct{ Data struct{ ID string } }
					if st, answered := c.do(target, "POST", "/webhook/custom-orders", sig, body, &imp); answered && st < 300 {
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
	kill()
	sinceKill := time.Since(killedAt)
	t.Logf("%d requests; %d shipments bought, %d delivered, %d imports accepted", c.sent.Load(), len(labels), delivered, len(imports))

	// Every accepted import ends PROCESSED, its order made once; the survivor takes over the
	// killed process's leases.
	deadline := time.Now().Add(90 * time.Second)
	for payload, id := range imports {
		for {
			var imp struct{ Data struct{ Status string } }
			c.do(a, "GET", "/order_imports/"+id, nil, nil, &imp)
			if imp.Data.Status == "PROCESSED" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("import %s (%s) is %s", id, payload, imp.Data.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var orders struct {
		Metadata struct {
			TotalCount int `json:"total_count"`
		} `json:"metadata"`
	}
	c.do(a, "GET", "/orders?page_size=1", nil, nil, &orders)
	if orders.Metadata.TotalCount != len(imports) {
		t.Errorf("%d orders; want one per accepted import (%d)", orders.Metadata.TotalCount, len(imports))
	}

	// Every event is delivered; a second 2xx only for events first delivered before the kill.
	var events []string
	for _, sub := range subs {
		for page := 1; ; page++ {
			var l struct {
				Data []struct {
					ID, Status string
				}
				Metadata struct {
					HasNext bool `json:"has_next_page"`
				} `json:"metadata"`
			}
			for {
				c.do(a, "GET", fmt.Sprintf("/webhooks/%s/events?page_size=100&page=%d", sub, page), nil, nil, &l)
				pending := 0
				for _, e := range l.Data {
					if e.Status != "DELIVERED" {
						pending++
					}
				}
				if pending == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d events of subscription %s not delivered", pending, sub)
				}
				time.Sleep(200 * time.Millisecond)
			}
			for _, e := range l.Data {
				events = append(events, e.ID)
			}
			if !l.Metadata.HasNext {
				break
			}
		}
	}
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
	recv.mu.Unlock()
	if len(events) < len(labels) {
		t.Errorf("%d events for %d purchases", len(events), len(labels))
	}

	// Two fresh processes start together: both closers find the ended DRAFTs at once, and
	// each is finalized once.
	type invoiceList struct {
		Data []struct {
			ID        string
			Number    string `json:"invoice_number"`
			Status    string
			PeriodEnd string `json:"period_end"`
			Total     int64  `json:"total_cents"`
		}
	}
	var before invoiceList
	c.do(a, "GET", "/billing/invoices?page_size=100", nil, nil, &before)
	ended := 0
	today := time.Now().UTC().Format("2006-01-02")
	for _, inv := range before.Data {
		if inv.Status == "DRAFT" && inv.PeriodEnd < today {
			ended++
		}
	}
	if ended == 0 {
		t.Error("the load left no ended DRAFT invoice for the closers")
	}
	closers := startProcs(t, bin, url, 2)
	var invs invoiceList
	for {
		c.do(closers[1], "GET", "/billing/invoices?page_size=100", nil, nil, &invs)
		left := 0
		for _, inv := range invs.Data {
			if inv.Status == "DRAFT" && inv.PeriodEnd < today {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ended DRAFTs left after the closers ran", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range closers {
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("%s after SIGTERM: %v", p.name, err)
		}
	}
	if len(invs.Data) != len(before.Data) {
		t.Errorf("%d invoices after the closers; %d before", len(invs.Data), len(before.Data))
	}
	seqs := map[string][]int{} // year → sequence numbers
	for _, inv := range invs.Data {
		var year string
		var seq int
		if _, err := fmt.Sscanf(strings.ReplaceAll(inv.Number, "-", " "), "INV %s %d", &year, &seq); err != nil {
			t.Fatalf("invoice number %q: %v", inv.Number, err)
		}
		seqs[year] = append(seqs[year], seq)
	}
	for year, s := range seqs {
		slices.Sort(s)
		if s[0] != 1 || s[len(s)-1] != len(s) {
			t.Errorf("invoice numbers of %s: %v; want 1…%d", year, s, len(s))
		}
	}

	// Each delivered label billed once; invoice totals are the sums of their live items.
	postage := 0
	for _, inv := range invs.Data {
		var items struct {
			Data []struct {
				Type  string
				Total int64 `json:"total_cents"`
			}
			Metadata struct {
				TotalCount int `json:"total_count"`
			} `json:"metadata"`
		}
		c.do(a, "GET", "/billing/invoices/"+inv.ID+"/line_items?page_size=250", nil, nil, &items)
		var sum int64
		for _, it := range items.Data {
			sum += it.Total
			if it.Type == "POSTAGE" {
				postage++
			}
		}
		if len(items.Data) != items.Metadata.TotalCount {
			t.Fatalf("invoice %s: %d items on a page of %d", inv.Number, items.Metadata.TotalCount, len(items.Data))
		}
		if sum != inv.Total {
			t.Errorf("invoice %s: total %d; live items sum to %d", inv.Number, inv.Total, sum)
		}
	}
	if postage < delivered || postage > delivered+uncertain {
		t.Errorf("%d POSTAGE items; want one per delivered label (%d, and up to %d the killed process took unanswered)",
			postage, delivered, uncertain)
	}

	c.mu.Lock()
	for _, bad := range c.bad {
		t.Error(bad)
	}
	c.mu.Unlock()
	t.Logf("%d events delivered (%d twice, sent before the kill); load ended %v after the kill; %d ended DRAFTs finalized by two closers",
		len(events), dup, sinceKill, ended)
}
