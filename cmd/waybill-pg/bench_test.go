package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// The throughput benchmark: the main paths through loopback HTTP on PostgreSQL, beside the
// same API on SQLite and a bare net/http handler, in alternating rounds of the same run
// (docs/postgresql.md has the figures). Run it with
//
//	go test -run '^$' -bench Paths -benchtime 1x
//
// Each round sends a fixed number of requests per path from benchClients clients to each of
// the three servers in turn; the benchmark reports the medians of benchRounds rounds.

const (
	benchRounds  = 5
	benchClients = 8
	benchDepth   = 2000 // shipments seeded for the cursor list, read about 1,750 deep
)

// benchPaths are the measured paths, each with its requests per round and the status waybill
// answers.
var benchPaths = []struct {
	name   string
	n      int
	status int
}{
	{"create shipment", 300, http.StatusCreated},
	{"buy", 300, http.StatusOK},
	{"get shipment", 1000, http.StatusOK},
	{"list at depth", 600, http.StatusOK},
	{"order import", 600, http.StatusAccepted},
}

// bareHandler is the yardstick: it reads the body and answers a small JSON document.
var bareHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"data":{"ok":true}}` + "\n"))
})

// benchTarget is one API under test: its server, credentials and prepared rows.
type benchTarget struct {
	name     string
	db       *store.DB
	srv      *httptest.Server
	token    string
	org      string
	secret   string
	template string // a shipment to read
	after    string // a cursor benchDepth-250 shipments deep

	mu  sync.Mutex
	buy []*shipping.Shipment // OPEN shipments to buy
	seq atomic.Int64
}

func newBenchTarget(b *testing.B, name string, db *store.DB, buys int) *benchTarget {
	ctx := context.Background()
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: "http://bench.test"})
	if err != nil {
		b.Fatal(err)
	}
	t := &benchTarget{name: name, db: db, srv: httptest.NewServer(api)}
	b.Cleanup(t.srv.Close)
	acct, err := db.CreateAccount(ctx, "bench", "Bench")
	if err != nil {
		b.Fatal(err)
	}
	tok, err := db.CreateToken(ctx, acct.ID, httpapi.AllScopes)
	if err != nil {
		b.Fatal(err)
	}
	t.token, t.org, t.secret = tok.Token, acct.OrganizationID, acct.IngestSecret
	client := &http.Client{}
	var s struct{ Data struct{ ID string } }
	if err := t.call(client, t.request(t.srv.URL, "create shipment"), &s); err != nil {
		b.Fatal(err)
	}
	t.template = s.Data.ID
	tmpl, err := db.Shipment(ctx, acct.ID, t.template)
	if err != nil {
		b.Fatal(err)
	}
	// Rows are cloned straight into the store, so that making them is not measured.
	clone := func() *shipping.Shipment {
		s := *tmpl
		s.ID = db.NewID()
		s.ShippingRates = slices.Clone(tmpl.ShippingRates)
		for i := range s.ShippingRates {
			s.ShippingRates[i].ID, s.ShippingRates[i].ShipmentID = db.NewID(), s.ID
		}
		if _, err := db.CreateShipment(ctx, &s); err != nil {
			b.Fatal(err)
		}
		return &s
	}
	for range benchDepth {
		clone()
	}
	for range buys {
		t.buy = append(t.buy, clone())
	}
	// Walk to depth with pages of 250 from the oldest half: the cursor after the 7th page.
	after := ""
	for range 7 {
		var page struct {
			Metadata struct {
				EndCursor string `json:"end_cursor"`
			} `json:"metadata"`
		}
		path := "/shipments?first=250"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		req, _ := http.NewRequest("GET", t.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+t.token)
		if err := t.call(client, req, &page); err != nil {
			b.Fatal(err)
		}
		after = page.Metadata.EndCursor
	}
	t.after = after
	return t
}

// request builds a request of path for t, to base: t's server, or the bare one, which gets
// the same requests (a buy of a placeholder shipment, so as not to use up t's).
func (t *benchTarget) request(base, path string) *http.Request {
	var req *http.Request
	switch path {
	case "create shipment":
		req, _ = http.NewRequest("POST", base+"/shipments", strings.NewReader(twoProcShipment))
	case "buy":
		s := &shipping.Shipment{ID: "x", ShippingRates: []shipping.Rate{{ID: "y"}}}
		if base == t.srv.URL {
			t.mu.Lock()
			s = t.buy[len(t.buy)-1]
			t.buy = t.buy[:len(t.buy)-1]
			t.mu.Unlock()
		}
		req, _ = http.NewRequest("POST", base+"/shipments/"+s.ID+"/rates/"+s.ShippingRates[0].ID,
			strings.NewReader(`{"inline_label": false}`))
	case "get shipment":
		req, _ = http.NewRequest("GET", base+"/shipments/"+t.template, nil)
	case "list at depth":
		req, _ = http.NewRequest("GET", base+"/shipments?first=50&after="+url.QueryEscape(t.after), nil)
	case "order import":
		body := twoProcOrder(int(t.seq.Add(1)))
		req, _ = http.NewRequest("POST", base+"/webhook/custom-orders", strings.NewReader(string(body)))
		req.Header.Set(ingest.OrganizationHeader, t.org)
		req.Header.Set(ingest.SignatureHeader, ingest.Sign(t.secret, body))
	}
	if req.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	return req
}

// call sends req and decodes a 2xx answer's body into out (when not nil).
func (t *benchTarget) call(client *http.Client, req *http.Request, out any) error {
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// measure sends n requests of path for t to base (t's server or the bare one) from
// benchClients clients and returns the requests per second.
func measure(b *testing.B, client *http.Client, t *benchTarget, base, path string, n, want int) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				req := t.request(base, path)
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != want {
					b.Errorf("%s on %s: status %d; want %d", path, t.name, res.StatusCode, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkPaths measures create shipment, buy, get shipment, the cursor list at depth and
// signed order imports on PostgreSQL and on SQLite, each beside a bare net/http handler:
// benchRounds rounds, each of every path on bare, SQLite and PostgreSQL in turn, reporting
// the medians and their ratios to bare. The background workers do not run; after each round
// the order-import worker drains the imports the round accepted, timed on its own.
func BenchmarkPaths(b *testing.B) {
	ctx := context.Background()
	lite, err := store.OpenSQLite(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer lite.Close()
	buys := b.N * benchRounds * benchPaths[1].n
	targets := []*benchTarget{newBenchTarget(b, "SQLite", lite, buys), newBenchTarget(b, "PostgreSQL", openFresh(b), buys)}
	bare := httptest.NewServer(bareHandler)
	defer bare.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	rates := map[string][3][]float64{} // path → bare, SQLite, PostgreSQL rounds
	var processing [2][]float64        // SQLite, PostgreSQL orders/s
	importsPerRound := benchPaths[len(benchPaths)-1].n
	for range b.N {
		for round := range benchRounds {
			for _, p := range benchPaths {
				r := rates[p.name]
				r[0] = append(r[0], measure(b, client, targets[0], bare.URL, p.name, p.n, http.StatusOK))
				// Alternate which backend goes first, so neither always follows the other.
				order := []int{0, 1}
				if round%2 == 1 {
					order = []int{1, 0}
				}
				for _, k := range order {
					r[k+1] = append(r[k+1], measure(b, client, targets[k], targets[k].srv.URL, p.name, p.n, p.status))
				}
				rates[p.name] = r
			}
			// The order-import worker: the imports just accepted, from QUEUED to PROCESSED
			// with their orders.
			for k, t := range targets {
				w := &ingest.Worker{Queue: t.db}
				start := time.Now()
				if err := w.Drain(ctx); err != nil {
					b.Fatal(err)
				}
				processing[k] = append(processing[k], float64(importsPerRound)/time.Since(start).Seconds())
			}
		}
	}
	for _, t := range targets {
		var orders struct {
			Metadata struct {
				TotalCount int `json:"total_count"`
			} `json:"metadata"`
		}
		req, _ := http.NewRequest("GET", t.srv.URL+"/orders?page_size=1", nil)
		req.Header.Set("Authorization", "Bearer "+t.token)
		if err := t.call(client, req, &orders); err != nil {
			b.Fatal(err)
		}
		if want := b.N * benchRounds * importsPerRound; orders.Metadata.TotalCount != want {
			b.Fatalf("%s: %d orders; want %d", t.name, orders.Metadata.TotalCount, want)
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-16s %10s %10s %10s %8s %8s\n", "path", "bare", "SQLite", "PostgreSQL", "SQLite×", "PG×")
	for _, p := range benchPaths {
		r := rates[p.name]
		med := [3]float64{median(r[0]), median(r[1]), median(r[2])}
		fmt.Fprintf(&table, "%-16s %10.0f %10.0f %10.0f %8.3f %8.3f\n", p.name, med[0], med[1], med[2], med[1]/med[0], med[2]/med[0])
		unit := strings.ReplaceAll(p.name, " ", "-")
		b.ReportMetric(med[1], unit+"-sqlite-req/s")
		b.ReportMetric(med[2], unit+"-pg-req/s")
	}
	med := [2]float64{median(processing[0]), median(processing[1])}
	fmt.Fprintf(&table, "%-16s %10s %10.0f %10.0f   (orders/s: QUEUED to PROCESSED, no HTTP)\n", "import worker", "", med[0], med[1])
	b.ReportMetric(med[0], "import-worker-sqlite-orders/s")
	b.ReportMetric(med[1], "import-worker-pg-orders/s")
	b.Logf("medians of %d alternating rounds, %d clients, req/s:%s", benchRounds*b.N, benchClients, table.String())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
