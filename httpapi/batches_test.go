package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
)

const batchShipment = `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

// batchOf is a POST /batches body of n copies of batchShipment.
func batchOf(n int, buy string) string {
	return `{"buy": "` + buy + `", "shipments": [` + strings.TrimSuffix(strings.Repeat(batchShipment+",", n), ",") + `]}`
}

type batchAnswer struct {
	Data shipping.Batch `json:"data"`
}

// TestBatchItemWorkedAgain is the crash of TestCrashDuringBatch made deterministic: a worker
// claims the items, creates and buys one, and dies before recording it (its lease runs out);
// the next run finds the shipment and the purchase and records them, buying nothing again.
// Another item dies after its create only: the next run buys it once.
func TestBatchItemWorkedAgain(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := decode[batchAnswer](t, e.do("POST", "/batches", "all", batchOf(3, "CHEAPEST")), http.StatusAccepted)
	claims, err := e.claimItems(10)
	if err != nil || len(claims) != 3 {
		t.Fatalf("ClaimBatchItems = %d claims, %v; want 3", len(claims), err)
	}
	// Item 0: created and bought, not recorded. Item 1: created only.
	w := e.api.batches.worker
	create := func(c shipping.BatchClaim) *shipping.Shipment {
		t.Helper()
		n, err := w.Items.ItemShipment(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := w.Creator.Create(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := create(claims[0])
	rate, _ := shipping.BatchRate(s.ShippingRates, shipping.BatchBuyCheapest, false)
	req := shipping.BuyRequest{AccountID: claims[0].AccountID, ShipmentID: s.ID, RateID: rate.ID}
	if _, err := w.Buyer.Buy(ctx, req.Keyed(shipping.BatchItemKey(claims[0].BatchID, claims[0].Index), false)); err != nil {
		t.Fatal(err)
	}
	create(claims[1])
	e.setClock(testStart.Add(e.api.batches.worker.Lease + 1))
	e.drain()

	got := decode[batchAnswer](t, e.do("GET", "/batches/"+b.Data.ID, "all", nil), http.StatusOK)
	if got.Data.Status != shipping.BatchCompleted || got.Data.Purchased != 3 {
		t.Fatalf("batch = %s with %d purchased; want COMPLETED with 3", got.Data.Status, got.Data.Purchased)
	}
	for i, it := range got.Data.Items {
		if it.ShipmentID == nil || *it.ShipmentID != claims[i].ShipmentID {
			t.Errorf("item %d: shipment %v; want the one decided for it, %s", i, it.ShipmentID, claims[i].ShipmentID)
		}
	}
	var shipments, labels, events, attempts int
	for _, q := range []struct {
		sql string
		n   *int
	}{
		{`SELECT COUNT(*) FROM shipments`, &shipments},
		{`SELECT COUNT(*) FROM shipping_labels`, &labels},
		{`SELECT COUNT(*) FROM idempotency_keys`, &events},
		{`SELECT MIN(attempts) FROM batch_items WHERE position < 2`, &attempts},
	} {
		if err := e.sql.QueryRow(q.sql).Scan(q.n); err != nil {
			t.Fatal(err)
		}
	}
	if shipments != 3 || labels != 3 || events != 3 || attempts != 2 {
		t.Errorf("%d shipments, %d labels, %d idempotency keys, items 0 and 1 worked in %d claims; want 3, 3, 3, 2",
			shipments, labels, events, attempts)
	}
}

// TestBatchCompletionStale checks the fence: a run whose lease expired and whose item was
// claimed again cannot record its outcome.
func TestBatchCompletionStale(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	decode[batchAnswer](t, e.do("POST", "/batches", "all", batchOf(1, "NONE")), http.StatusAccepted)
	first, err := e.claimItems(10)
	if err != nil || len(first) != 1 {
		t.Fatalf("ClaimBatchItems = %d, %v", len(first), err)
	}
	e.setClock(testStart.Add(e.api.batches.worker.Lease + 1))
	second, err := e.claimItems(10)
	if err != nil || len(second) != 1 || second[0].Attempts != 2 {
		t.Fatalf("ClaimBatchItems after the lease = %+v, %v; want the item again", second, err)
	}
	o := shipping.ItemOutcome{Status: shipping.ItemCreated, ShipmentID: first[0].ShipmentID}
	if err := e.db.CompleteBatchItem(ctx, first[0], o, nil); err != shipping.ErrStaleClaim {
		t.Errorf("completing the stale claim = %v; want ErrStaleClaim", err)
	}
}

// TestBatchClaimFair checks that a claim shares its items between the accounts with a batch in
// progress: a large batch of one account does not hold back a small one of another.
func TestBatchClaimFair(t *testing.T) {
	e := newEnv(t)
	decode[batchAnswer](t, e.do("POST", "/batches", "all", batchOf(50, "NONE")), http.StatusAccepted)
	decode[batchAnswer](t, e.do("POST", "/batches", "other", batchOf(3, "NONE")), http.StatusAccepted)
	claims, err := e.claimItems(10)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range claims {
		per[c.AccountID]++
	}
	if per[e.accounts["other"].ID] != 3 || per[e.accounts["acme"].ID] != 5 {
		t.Errorf("claims per account = %v; want other's 3 and 5 of acme's (an equal share of 10)", per)
	}
	for i, c := range claims {
		if c.AccountID == e.accounts["acme"].ID && c.Index != i-countBefore(claims[:i], e.accounts["other"].ID) {
			t.Errorf("claim %d: item %d of acme's batch; want the queue in order", i, c.Index)
		}
	}
}

func countBefore(claims []shipping.BatchClaim, acct string) int {
	n := 0
	for _, c := range claims {
		if c.AccountID == acct {
			n++
		}
	}
	return n
}

// TestBatchHostileInput: oversized and NUL-bearing bodies, and caps, are refused with 4xx
// before anything is stored.
func TestBatchHostileInput(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		body string
		want int
		code string
	}{
		{"over 1 MiB", batchOf(4000, "NONE"), http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"1,001 items", `{"shipments": [` + strings.TrimSuffix(strings.Repeat("{},", 1001), ",") + `]}`, http.StatusBadRequest, "validation_failed"},
		{"a NUL in an item", `{"shipments": [{"origin": {"name": "A\u0000B"}}]}`, http.StatusBadRequest, "validation_failed"},
		{"shipments not a list", `{"shipments": {"a": 1}}`, http.StatusBadRequest, "validation_failed"},
		{"trailing data", batchOf(1, "NONE") + "{}", http.StatusBadRequest, "malformed_json"},
		{"duplicate key in an item", `{"shipments": [{"origin": {}, "origin": {}}]}`, http.StatusBadRequest, "malformed_json"},
		{"shipments null", `{"shipments": null}`, http.StatusBadRequest, "validation_failed"},
		{"shipments a number", `{"shipments": 5}`, http.StatusBadRequest, "invalid_type"},
		{"deep nesting", `{"shipments": [` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `]}`, http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := e.do("POST", "/batches", "all", tt.body)
			if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.code) {
				t.Errorf("POST /batches = %d %s; want %d %s", w.Code, w.Body, tt.want, tt.code)
			}
		})
	}
	var n int
	if err := e.sql.QueryRow(`SELECT COUNT(*) FROM batches`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d batches stored (%v); want none", n, err)
	}
	// The item's index is in the field of a NUL.
	w := e.do("POST", "/batches", "all", `{"shipments": [{}, {"origin": {"name": "A\u0000B"}}]}`)
	if !strings.Contains(w.Body.String(), `shipments[1]`) && !strings.Contains(w.Body.String(), `shipments.1`) {
		t.Errorf("NUL in item 1: %s; want the item's index in the field", w.Body)
	}
}

// TestBatchNullItem: a null item is an item that is not an object, stored FAILED at once like
// any other; the batch is accepted and its other items proceed (a reviewer found it refused the
// whole batch with 400).
func TestBatchNullItem(t *testing.T) {
	e := newEnv(t)
	b := decode[batchAnswer](t, e.do("POST", "/batches", "all", `{"buy": "NONE", "shipments": [null, `+batchShipment+`]}`), http.StatusAccepted)
	if b.Data.Count != 2 || b.Data.Failed != 1 || len(b.Data.Items) != 2 || b.Data.Items[0].Status != shipping.ItemFailed ||
		!strings.Contains(string(b.Data.Items[0].Errors), `"field":"(item)","code":"invalid_type"`) || b.Data.Items[1].Status != shipping.ItemQueued {
		t.Fatalf("POST /batches with a null item = %+v; want it FAILED (invalid_type) and the other queued", b.Data)
	}
	e.drain()
	got := decode[batchAnswer](t, e.do("GET", "/batches/"+b.Data.ID, "all", nil), http.StatusOK)
	if got.Data.Status != shipping.BatchCompleted || got.Data.Created != 1 || got.Data.Failed != 1 {
		t.Errorf("after the drain: %s, %d created, %d failed; want COMPLETED, 1, 1", got.Data.Status, got.Data.Created, got.Data.Failed)
	}
}

// TestBatchWorkedInParallel works two accounts' batches with the worker's parallelism (as Run
// does; the race detector watches): every item ends once, in order.
func TestBatchWorkedInParallel(t *testing.T) {
	e := newEnv(t)
	a := decode[batchAnswer](t, e.do("POST", "/batches", "all", batchOf(40, "FASTEST")), http.StatusAccepted)
	o := decode[batchAnswer](t, e.do("POST", "/batches", "other", batchOf(5, "CHEAPEST")), http.StatusAccepted)
	if err := e.api.batches.worker.Drain(context.Background(), e.api.batches.worker.Parallel); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, token string
		n         int
	}{{a.Data.ID, "all", 40}, {o.Data.ID, "other", 5}} {
		got := decode[batchAnswer](t, e.do("GET", "/batches/"+c.id, c.token, nil), http.StatusOK)
		if got.Data.Status != shipping.BatchCompleted || got.Data.Purchased != c.n || got.Data.LabelURL == nil {
			t.Errorf("batch %s: %s, %d purchased, label_url %v; want COMPLETED, %d", c.id, got.Data.Status, got.Data.Purchased, got.Data.LabelURL, c.n)
		}
		for i, it := range got.Data.Items {
			if it.Index != i || it.Status != shipping.ItemPurchased {
				t.Errorf("batch %s item %d = %+v", c.id, i, it)
			}
		}
	}
}

// refusingCarrier is a host's Go carrier, FLAKY, quoting as the sample POSTLINE does, whose
// every purchase is refused: its tracking numbers are used up.
type refusingCarrier struct{ shipping.Carrier }

func (c refusingCarrier) Name() string { return "FLAKY" }

func (c refusingCarrier) Purchase(context.Context, shipping.PurchaseRequest) (string, error) {
	return "", shipping.ErrTrackingNumbersExhausted
}

// TestBatchItemAttemptsBounded: no error makes a batch item retry forever (an item
// whose buy kept failing stayed PROCESSING, tried again every lease). A failure of the
// machinery (a carrier that does not answer) is tried again when the lease expires, and at the
// MaxItemAttempts-th attempt the item is FAILED with its last error; a refusal (the carrier's
// tracking numbers used up) fails it at the first. Either way its shipment is kept with its
// error, and the batch completes.
func TestBatchItemAttemptsBounded(t *testing.T) {
	for _, tt := range []struct {
		name     string
		carrier  func(postline shipping.Carrier) shipping.Carrier
		attempts int
		code     string
	}{
		{"carrier down", func(c shipping.Carrier) shipping.Carrier {
			down := new(atomic.Bool)
			down.Store(true)
			return flakyCarrier{c, down, new(atomic.Bool)}
		}, shipping.MaxItemAttempts, "carrier_error"},
		{"tracking numbers exhausted", func(c shipping.Carrier) shipping.Carrier {
			return refusingCarrier{c}
		}, 1, "tracking_numbers_exhausted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for _, c := range carrier.SampleCarriers() {
				if c.Name() == "POSTLINE" {
					api, err := New(Config{DB: e.db, BaseURL: e.url, Carriers: []shipping.Carrier{tt.carrier(c)}})
					if err != nil {
						t.Fatal(err)
					}
					e.api = api
				}
			}
			decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/flaky", "admin", `{"name": "Flaky", "carriers": ["FLAKY"]}`), http.StatusCreated)
			body := strings.Replace(batchOf(1, "CHEAPEST"), `{"origin"`, `{"rate_shopping_profile": "flaky", "origin"`, 1)
			b := decode[batchAnswer](t, e.do("POST", "/batches", "all", body), http.StatusAccepted)
			now := testStart
			var got batchAnswer
			for attempt := 1; attempt <= shipping.MaxItemAttempts+1; attempt++ {
				e.drain()
				got = decode[batchAnswer](t, e.do("GET", "/batches/"+b.Data.ID, "all", nil), http.StatusOK)
				if wantDone := attempt >= tt.attempts; (got.Data.Status == shipping.BatchCompleted) != wantDone {
					t.Fatalf("after attempt %d the batch is %s; want COMPLETED %v", attempt, got.Data.Status, wantDone)
				}
				now = now.Add(e.api.batches.worker.Lease + time.Second)
				e.setClock(now)
			}
			var attempts int
			if err := e.sql.QueryRow(`SELECT attempts FROM batch_items`).Scan(&attempts); err != nil {
				t.Fatal(err)
			}
			it := got.Data.Items[0]
			var errs struct{ Code string }
			json.Unmarshal(it.Errors, &errs)
			if attempts != tt.attempts || it.Status != shipping.ItemFailed || errs.Code != tt.code || it.ShipmentID == nil {
				t.Errorf("item after %d attempts: %s %s (shipment %v); want FAILED %s with its shipment after %d",
					attempts, it.Status, it.Errors, it.ShipmentID, tt.code, tt.attempts)
			}
		})
	}
}

// TestBatchItemInterrupted: an item whose every attempt ended without an outcome (its worker
// died each time, the lease expired) is FAILED too_many_attempts by the claim after the last.
func TestBatchItemInterrupted(t *testing.T) {
	e := newEnv(t)
	b := decode[batchAnswer](t, e.do("POST", "/batches", "all", batchOf(1, "CHEAPEST")), http.StatusAccepted)
	now := testStart
	for range shipping.MaxItemAttempts {
		if claims, err := e.claimItems(10); err != nil || len(claims) != 1 {
			t.Fatalf("ClaimBatchItems = %d claims, %v; want 1", len(claims), err)
		}
		now = now.Add(e.api.batches.worker.Lease + time.Second)
		e.setClock(now)
	}
	e.drain()
	got := decode[batchAnswer](t, e.do("GET", "/batches/"+b.Data.ID, "all", nil), http.StatusOK)
	if it := got.Data.Items[0]; it.Status != shipping.ItemFailed || !strings.Contains(string(it.Errors), `"too_many_attempts"`) {
		t.Errorf("item after %d interrupted attempts: %s %s; want FAILED too_many_attempts", shipping.MaxItemAttempts, it.Status, it.Errors)
	}
}

// claimItems claims batch items as the worker does, at most n in all.
func (e *testEnv) claimItems(n int) ([]shipping.BatchClaim, error) {
	w := e.api.batches.worker
	defer func(size int) { w.ClaimSize = size }(w.ClaimSize)
	w.ClaimSize = n
	return w.Claim(context.Background())
}
