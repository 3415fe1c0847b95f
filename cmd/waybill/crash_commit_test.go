package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

const crashShipmentBody = `{"origin": {"name": "A", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "B", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

// acked records the writes the server acknowledged: created shipments and bought labels.
type acked struct {
	mu        sync.Mutex
	shipments []string
	labels    map[string]string // shipment id → label id
}

// writeLoop creates shipments and buys each, recording every 2xx, until the server stops
// answering.
func (a *acked) writeLoop(t *testing.T, base, token string, answered *atomic.Int64, onAnswer func()) {
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(path, body string, v any) (int, error) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			return 0, err // the connection died mid-answer: not acknowledged
		}
		return res.StatusCode, nil
	}
	for {
		var s struct {
			Data struct {
				ID    string `json:"id"`
				Rates []struct {
					ID string `json:"id"`
				} `json:"shipping_rates"`
			} `json:"data"`
		}
		code, err := post("/shipments", crashShipmentBody, &s)
		if err != nil {
			return
		}
		if code != http.StatusCreated {
			t.Errorf("POST /shipments answered %d", code)
			return
		}
		a.mu.Lock()
		a.shipments = append(a.shipments, s.Data.ID)
		a.mu.Unlock()
		answered.Add(1)
		onAnswer()
		var b struct {
			Data struct {
				Label struct {
					ID string `json:"id"`
				} `json:"shipping_label"`
			} `json:"data"`
		}
		code, err = post("/shipments/"+s.Data.ID+"/rates/"+s.Data.Rates[0].ID, "", &b)
		if err != nil {
			return
		}
		if code != http.StatusOK {
			t.Errorf("buy answered %d", code)
			return
		}
		a.mu.Lock()
		a.labels[s.Data.ID] = b.Data.Label.ID
		a.mu.Unlock()
		answered.Add(1)
		onAnswer()
	}
}

// TestCrashDuringGroupCommit kills the server with SIGKILL while 32 clients create and buy
// shipments (so their writes share group commits), three times, and checks that every write
// the server acknowledged is in the database afterwards, with its stored response current.
func TestCrashDuringGroupCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills server processes")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	acct, token := createAccount(t, dbPath, "Crash", "READ_SHIPMENTS,WRITE_SHIPMENTS")
	a := &acked{labels: map[string]string{}}
	for round := 1; round <= 3; round++ {
		base, cmd := startChild(t, dbPath)
		var answered atomic.Int64
		var once sync.Once
		killAt := int64(100 + 50*round)
		kill := func() {
			if answered.Load() >= killAt {
				once.Do(func() { cmd.Process.Kill() }) // SIGKILL: no shutdown, no flush
			}
		}
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() { defer wg.Done(); a.writeLoop(t, base, token, &answered, kill) }()
		}
		wg.Wait()
		cmd.Wait()
		t.Logf("round %d: killed after %d answers", round, answered.Load())
	}

	ctx := context.Background()
	db, err := store.OpenSQLite(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range a.shipments {
		s, err := db.Shipment(ctx, acct["id"], id)
		if errors.Is(err, store.ErrNotFound) {
			t.Errorf("acknowledged shipment %s is lost", id)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if l, bought := a.labels[id]; bought {
			if s.Status != shipping.StatusPurchased || s.ShippingLabel == nil || s.ShippingLabel.ID != l {
				t.Errorf("acknowledged buy of %s is lost: status %s, label %v", id, s.Status, s.ShippingLabel)
			}
		}
		stored, err := db.ShipmentJSON(ctx, acct["id"], id)
		if err != nil {
			t.Fatal(err)
		}
		var got shipping.Shipment
		if err := json.Unmarshal([]byte(stored), &got); err != nil || got.Status != s.Status {
			t.Errorf("stored response of %s says %s; the shipment is %s (%v)", id, got.Status, s.Status, err)
		}
	}
	t.Logf("%d acknowledged shipments, %d acknowledged buys, all found", len(a.shipments), len(a.labels))
}
