package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
)

// TestTwoProcessManifests: two waybill-pg processes on one database close out the same
// account's day at once, while labels are still being bought, and take one carrier push twice
// at once. No label lands in two manifests, every label bought is manifested exactly once, each
// pushed event is recorded once, and nothing answers 500.
func TestTwoProcessManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	dbURL := freshSchema(t)
	bin := buildBinary(t)
	db := openSQL(t, dbURL)
	procs := startProcs(t, bin, dbURL, "A", "B")
	token := strings.TrimSpace(strings.TrimPrefix(procs[0].out.String()+procs[1].out.String(), "token: "))
	c := &loadClient{client: &http.Client{Timeout: 30 * time.Second}}

	shipment := []byte(`{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
	 "destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
	 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"},
	 "rate_shopping_strategy": "CHEAPEST"}`)
	var mu sync.Mutex
	var carrier string
	var codes []string
	buy := func(p *proc) {
		var s struct {
			Data struct {
				ID            string
				ShippingRates []struct{ ID string } `json:"shipping_rates"`
			}
		}
		if st, _ := c.do(p, token, "POST", "/shipments", nil, shipment, &s); st != http.StatusCreated {
			c.fail("create shipment: %d", st)
			return
		}
		var b struct {
			Data struct {
				ShippingLabel struct {
					Carrier      string
					TrackingCode string `json:"tracking_code"`
				} `json:"shipping_label"`
			}
		}
		if st, _ := c.do(p, token, "POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, nil, nil, &b); st != http.StatusOK {
			c.fail("buy: %d", st)
			return
		}
		mu.Lock()
		carrier, codes = b.Data.ShippingLabel.Carrier, append(codes, b.Data.ShippingLabel.TrackingCode)
		mu.Unlock()
	}
	for i := range 20 {
		buy(procs[i%2])
	}
	closeOut := func(p *proc) {
		st, _ := c.do(p, token, "POST", "/manifests", nil, fmt.Appendf(nil, `{"carrier": %q}`, carrier), nil)
		if st != http.StatusCreated && st != http.StatusUnprocessableEntity {
			c.fail("close-out on %s: %d", p.name, st)
		}
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(2)
		go func() { defer wg.Done(); closeOut(procs[i%2]) }()
		go func() { defer wg.Done(); buy(procs[(i+1)%2]) }()
	}
	wg.Wait()
	closeOut(procs[0])

	var labels, manifested int
	if err := db.QueryRow(`SELECT COUNT(*), COUNT(manifest_id) FROM shipping_labels`).Scan(&labels, &manifested); err != nil {
		t.Fatal(err)
	}
	if labels != len(codes) || manifested != labels {
		t.Errorf("%d labels bought, %d stored, %d manifested; want all manifested", len(codes), labels, manifested)
	}
	rows, err := db.Query(`SELECT id, label_ids, label_count FROM manifests`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for rows.Next() {
		var id, ids string
		var n int
		if err := rows.Scan(&id, &ids, &n); err != nil {
			t.Fatal(err)
		}
		var list []string
		json.Unmarshal([]byte(ids), &list)
		if len(list) != n {
			t.Errorf("manifest %s: label_count %d, %d ids", id, n, len(list))
		}
		for _, l := range list {
			if other, dup := seen[l]; dup {
				t.Errorf("label %s is in manifests %s and %s", l, other, id)
			}
			seen[l] = id
			var got string
			if err := db.QueryRow(`SELECT manifest_id FROM shipping_labels WHERE id = $1`, l).Scan(&got); err != nil || got != id {
				t.Errorf("label %s: manifest_id %q (%v); want %s", l, got, err, id)
			}
		}
	}
	rows.Close()
	if len(seen) != labels {
		t.Errorf("the manifests list %d labels; want %d", len(seen), labels)
	}

	// One push, sent to both processes at once: each event is recorded once.
	var secret struct {
		Data struct{ Secret string }
	}
	if st, _ := c.do(procs[0], token, "POST", "/admin/carriers/"+carrier+"/event_secret/rotate", nil, nil, &secret); st != http.StatusOK {
		t.Fatalf("rotate: %d", st)
	}
	var events []string
	for _, code := range codes {
		events = append(events, fmt.Sprintf(`{"tracking_code": %q, "status": "IN_TRANSIT", "message": "Picked up", "occurred_at": %q}`,
			code, time.Now().Add(time.Minute).UTC().Format(time.RFC3339)))
	}
	body := []byte(`{"events": [` + strings.Join(events, ",") + `]}`)
	sig := map[string]string{"X-Carrier-Signature": ingest.Sign(secret.Data.Secret, body)}
	accepted := make([]int, 2)
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ans struct {
				Data struct {
					Accepted, Duplicates int
					Results              []struct{ Status, Message string }
				}
			}
			if st, _ := c.do(p, "", "POST", "/carrier_events/"+carrier, sig, body, &ans); st != http.StatusOK {
				c.fail("push on %s: %d", p.name, st)
			}
			accepted[i] = ans.Data.Accepted
			if len(ans.Data.Results) > 0 && ans.Data.Results[0].Status == "INVALID" {
				c.fail("push on %s: %s", p.name, ans.Data.Results[0].Message)
			}
		}()
	}
	wg.Wait()
	if accepted[0]+accepted[1] != len(codes) {
		t.Errorf("the two pushes accepted %d + %d events; want %d in all", accepted[0], accepted[1], len(codes))
	}
	var recorded int
	if err := db.QueryRow(`SELECT COUNT(*) FROM tracking_events`).Scan(&recorded); err != nil || recorded != len(codes) {
		t.Errorf("%d tracking events recorded (%v); want %d", recorded, err, len(codes))
	}
	for _, p := range procs {
		p.stop(t)
	}
	for _, b := range c.bad {
		t.Error(b)
	}
}
