package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
)

// serialsCard is a carrier whose luhn numbers are "ZQ", an 8-digit serial and a check digit,
// with serials 1 to rangeEnd.
func serialsCard(rangeEnd int) []byte {
	return fmt.Appendf(nil, `{"name": "Serial Test", "effective_from": "2026-01-01", "max_weight_oz": 1120,
		"services": [{"code": "GROUND", "name": "Ground", "transit_days": [1, 2, 3, 3, 4, 4, 5, 5], "weight_breaks_oz": [80],
			"prices_cents": [[500, 520, 540, 560, 580, 600, 620, 640]]}],
		"tracking": {"scheme": "luhn", "prefix": "ZQ", "digits": 8, "range_start": 1, "range_end": %d}}`, rangeEnd)
}

// serialOf is the serial in one of serialsCard's tracking numbers.
func serialOf(code string) (int64, error) {
	if len(code) != 11 || !strings.HasPrefix(code, "ZQ") {
		return 0, fmt.Errorf("tracking code %q is not one of the test carrier's", code)
	}
	return strconv.ParseInt(code[2:10], 10, 64)
}

// serialBuy is one buy's answer: which process incarnation served it, when it was sent and
// answered, and the serial of its tracking number.
type serialBuy struct {
	proc         string
	sent, answer time.Time
	serial       int64
}

// TestTwoProcessesSerials buys many labels of one carrier through two waybill-pg processes on
// one database, 16 buyers at once, with a range of serials smaller than the shipments. Midway
// process B is killed with SIGKILL (losing the serials it had reserved) and started again.
// Every tracking number is issued once (no buy is refused as tracking_number_taken, no two
// answers and no two stored labels share a number); within a process, a buy sent after another
// was answered gets a larger serial; the restarted process issues only serials past everything
// reserved before the kill; no serial is past range_end, and once the range is used up buys
// are refused as tracking_numbers_exhausted.
func TestTwoProcessesSerials(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	const (
		shipments = 900
		rangeEnd  = 800
		killAfter = 250 // buys answered before B is killed
		buyers    = 16
	)
	dbURL := freshSchema(t)
	bin := buildBinary(t)
	db := openSQL(t, dbURL)
	procs := startProcs(t, bin, dbURL, "A", "B")
	a := procs[0]
	admin := strings.TrimSpace(strings.TrimPrefix(procs[0].out.String()+procs[1].out.String(), "token: "))
	c := &loadClient{client: &http.Client{Timeout: 20 * time.Second}}

	var acct, tok struct {
		Data struct{ ID, Token string } `json:"data"`
	}
	if st, _ := c.do(a, admin, "POST", "/admin/accounts", nil, []byte(`{"name": "serials"}`), &acct); st != http.StatusCreated {
		t.Fatalf("create account: %d", st)
	}
	scopes, _ := json.Marshal(map[string][]string{"scopes": httpapi.AllScopes})
	if st, _ := c.do(a, admin, "POST", "/admin/accounts/"+acct.Data.ID+"/tokens", nil, scopes, &tok); st != http.StatusCreated {
		t.Fatalf("create token: %d", st)
	}
	token := tok.Data.Token
	if st, _ := c.do(a, admin, "PUT", "/admin/carriers/ZQX", nil, serialsCard(rangeEnd), nil); st != http.StatusCreated {
		t.Fatalf("put carrier: %d", st)
	}
	if st, _ := c.do(a, admin, "PUT", "/admin/rate_shopping_profiles/zq", nil, []byte(`{"name": "ZQ only", "carriers": ["ZQX"]}`), nil); st != http.StatusCreated {
		t.Fatalf("put profile: %d", st)
	}

	// The shipments, created through both processes; each buy path is bought once.
	body := strings.Replace(twoProcShipment, `"parcel"`, `"rate_shopping_profile": "zq", "parcel"`, 1)
	paths := make(chan string, shipments)
	var cw sync.WaitGroup
	for w := range 8 {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for i := w; i < shipments; i += 8 {
				var s struct {
					Data struct {
						ID            string
						ShippingRates []struct{ ID string } `json:"shipping_rates"`
					}
				}
				if st, _ := c.do(procs[i%2], token, "POST", "/shipments", nil, []byte(body), &s); st != http.StatusCreated || len(s.Data.ShippingRates) != 1 {
					c.fail("create shipment %d: %d, %d rates", i, st, len(s.Data.ShippingRates))
					continue
				}
				paths <- "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID
			}
		}()
	}
	cw.Wait()
	close(paths)
	if len(paths) != shipments {
		t.Fatalf("%d shipments created; want %d", len(paths), shipments)
	}

	var (
		mu        sync.Mutex
		live      = []*proc{procs[0], procs[1]} // B is replaced by its restart
		bought    []serialBuy
		exhausted = map[string]int{} // by process incarnation
		answered  atomic.Int64
		restarted = make(chan struct{})
		bw        sync.WaitGroup
	)
	// buy sends one buy to p and records its answer; it reports false when p gave none.
	buy := func(p *proc, path string) bool {
		req, _ := http.NewRequest("POST", p.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		sent := time.Now()
		res, err := c.client.Do(req)
		if err != nil {
			if !p.killed.Load() {
				c.fail("buy on %s: %v", p.name, err)
			}
			return false
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		at := time.Now()
		if err != nil {
			if !p.killed.Load() {
				c.fail("buy on %s: reading the answer: %v", p.name, err)
			}
			return false
		}
		answered.Add(1)
		var out struct {
			Data struct {
				Label struct {
					TrackingCode string `json:"tracking_code"`
				} `json:"shipping_label"`
			}
			Errors struct{ Code string }
		}
		json.Unmarshal(data, &out)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case res.StatusCode < 300:
			n, err := serialOf(out.Data.Label.TrackingCode)
			if err != nil {
				c.fail("buy on %s: %v", p.name, err)
				return true
			}
			bought = append(bought, serialBuy{p.name, sent, at, n})
		case res.StatusCode == http.StatusUnprocessableEntity && out.Errors.Code == "tracking_numbers_exhausted":
			exhausted[p.name]++
		default:
			c.fail("buy on %s: %d %s", p.name, res.StatusCode, bytes.TrimSpace(data))
		}
		return true
	}
	for w := range buyers {
		bw.Add(1)
		go func() {
			defer bw.Done()
			for path := range paths {
				mu.Lock()
				p := live[w%2]
				mu.Unlock()
				if p.killed.Load() {
					<-restarted // B's buyers wait for its restart
					mu.Lock()
					p = live[w%2]
					mu.Unlock()
				}
				// A buy in flight when its process was killed may or may not have been bought:
				// it is not sent again.
				buy(p, path)
			}
		}()
	}

	// The kill, the snapshot of what was reserved by then, and the restart.
	var reservedAtKill, maxAtKill int64
	var b2 *proc
	func() {
		defer close(restarted)
		if !waitFor(60*time.Second, func() bool { return answered.Load() >= killAfter }) {
			t.Errorf("only %d buys answered within 60 s", answered.Load())
			return
		}
		b := procs[1]
		b.killed.Store(true)
		b.cmd.Process.Kill() // SIGKILL
		b.cmd.Wait()
		rows, err := db.Query(`SELECT tracking_code FROM shipping_labels WHERE carrier = 'ZQX'`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var code string
			rows.Scan(&code)
			if n, err := serialOf(code); err == nil {
				maxAtKill = max(maxAtKill, n)
			}
		}
		rows.Close()
		// Read after the labels: every serial stored is below it, and whatever B had reserved.
		if err := db.QueryRow(`SELECT next_serial FROM carriers WHERE code = 'ZQX'`).Scan(&reservedAtKill); err != nil {
			t.Fatal(err)
		}
		b2 = startProcs(t, bin, dbURL, "B2")[0]
		mu.Lock()
		live[1] = b2
		mu.Unlock()
	}()
	bw.Wait()
	<-restarted
	if t.Failed() {
		return
	}
	b2.stop(t)
	a.stop(t)

	// Every number issued once: in the answers and in the database.
	seen := map[int64]string{}
	for _, b := range bought {
		if prev, dup := seen[b.serial]; dup {
			t.Errorf("serial %d issued twice: by %s and %s", b.serial, prev, b.proc)
		}
		seen[b.serial] = b.proc
		if b.serial < 1 || b.serial > rangeEnd {
			t.Errorf("serial %d issued by %s: outside the range 1…%d", b.serial, b.proc, rangeEnd)
		}
	}
	var stored, distinct int
	var last int64
	if err := db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT tracking_code) FROM shipping_labels WHERE carrier = 'ZQX'`).Scan(&stored, &distinct); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT next_serial FROM carriers WHERE code = 'ZQX'`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if stored != distinct || stored < len(bought) {
		t.Errorf("%d labels stored, %d distinct tracking codes; %d buys answered bought", stored, distinct, len(bought))
	}
	if last != rangeEnd+1 {
		t.Errorf("next_serial = %d after the load; want range_end + 1 = %d (the range used up, never past its end)", last, rangeEnd+1)
	}
	// A process may still hold reserved serials when another finds the range used up. The buys
	// in flight at the kill got no answer: each may have been bought or not.
	total := 0
	for _, n := range exhausted {
		total += n
	}
	unanswered := shipments - int(answered.Load())
	if total < shipments-rangeEnd-unanswered || len(bought)+total > shipments || len(bought) > rangeEnd {
		t.Errorf("%d buys refused as exhausted %v, %d bought, %d unanswered at the kill; want at least %d refused, at most %d bought, and no shipment answered twice",
			total, exhausted, len(bought), unanswered, shipments-rangeEnd-unanswered, rangeEnd)
	}

	// Within a process, a buy sent after another was answered has the larger serial.
	byProc := map[string][]serialBuy{}
	for _, b := range bought {
		byProc[b.proc] = append(byProc[b.proc], b)
	}
	for name, buys := range byProc {
		slices.SortFunc(buys, func(x, y serialBuy) int { return x.answer.Compare(y.answer) })
		for _, y := range buys {
			for _, x := range buys {
				if !x.answer.Before(y.sent) {
					break
				}
				if x.serial >= y.serial {
					t.Errorf("process %s: serial %d sent after serial %d was answered", name, y.serial, x.serial)
				}
			}
		}
	}

	// After the restart, only serials past everything reserved before the kill.
	if maxAtKill >= reservedAtKill {
		t.Errorf("serial %d stored at the kill, but next_serial was %d", maxAtKill, reservedAtKill)
	}
	for _, b := range byProc["B2"] {
		if b.serial < reservedAtKill {
			t.Errorf("restarted B issued serial %d; before the kill serials up to %d were reserved", b.serial, reservedAtKill-1)
		}
	}
	if len(byProc["A"]) == 0 || len(byProc["B"]) == 0 || len(byProc["B2"]) == 0 {
		t.Errorf("bought by A %d, by B %d, by B restarted %d; want some by each", len(byProc["A"]), len(byProc["B"]), len(byProc["B2"]))
	}
	for _, bad := range c.bad {
		t.Error(bad)
	}
	t.Logf("%d bought (A %d, B %d, B restarted %d), %d refused as exhausted %v; %d stored; at the kill serials to %d stored, to %d reserved",
		len(bought), len(byProc["A"]), len(byProc["B"]), len(byProc["B2"]), total, exhausted, stored, maxAtKill, reservedAtKill-1)
}
