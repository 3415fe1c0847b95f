package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

// TestBuysOutnumberThePool: more buys at once than the pool has connections all finish. A buy
// holds a connection for its transaction; one that asked for a second inside it (the carriers'
// recheck did) waited for ever once every connection was held by such a buy.
func TestBuysOutnumberThePool(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "pgx", freshSchema(t), store.PostgreSQL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: "http://waybill.test"})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := db.CreateToken(ctx, acct.ID, []string{httpapi.ScopeWriteShipments})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	const buys = 12
	paths := make([]string, buys)
	for i := range paths {
		code, body := do("POST", "/shipments", `{"origin": {"name": "A", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
			"destination": {"name": "B", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
			"parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}, "rate_shopping_strategy": "CHEAPEST"}`)
		var s struct {
			Data struct {
				ID            string
				ShippingRates []struct{ ID string } `json:"shipping_rates"`
			}
		}
		if code != http.StatusCreated || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("create = %d %s", code, body)
		}
		paths[i] = fmt.Sprintf("/shipments/%s/rates/%s", s.Data.ID, s.Data.ShippingRates[0].ID)
	}
	time.Sleep(2 * time.Millisecond) // the carriers are due for their recheck
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := do("POST", p, ""); code != http.StatusOK {
				t.Errorf("buy = %d %s", code, body)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the buys did not finish in 30 s: the pool is exhausted")
	}
}
