package shipping

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// workerStore is a BatchStore of one batch: its item's shipment (nil: none yet) and how many of
// its items are pending once this one finishes.
type workerStore struct {
	BatchStore
	shipment *Shipment
	pending  int
	outcome  ItemOutcome
	done     *BatchCompletion // nil when the batch did not complete
}

func (st *workerStore) Shipment(ctx context.Context, accountID, id string) (*Shipment, error) {
	if st.shipment == nil {
		return nil, ErrNotFound
	}
	return st.shipment, nil
}

func (st *workerStore) CompleteBatchItem(ctx context.Context, c BatchClaim, o ItemOutcome, done *BatchCompletion) error {
	if st.pending == 0 && done == nil {
		return ErrLastItem
	}
	st.outcome, st.done = o, done
	return nil
}

func (st *workerStore) Batch(ctx context.Context, accountID, id string) (*Batch, error) {
	return &Batch{ID: id, Status: BatchProcessing, Count: 1, Items: []BatchItem{{Index: 0, Status: ItemProcessing}}}, nil
}

// workerItems makes an OPEN shipment with one rate, and buys with buyErr.
type workerItems struct {
	buyErr error
	bought int
}

func (it *workerItems) ItemShipment(ctx context.Context, c BatchClaim) (NewShipment, error) {
	return NewShipment{ID: c.ShipmentID, AccountID: c.AccountID}, nil
}

func (it *workerItems) Create(ctx context.Context, n NewShipment) (*Shipment, string, error) {
	return &Shipment{ID: n.ID, Status: StatusOpen, ShippingRates: []Rate{{ID: "rate_1", TotalCents: 745}}}, "", nil
}

func (it *workerItems) Buy(ctx context.Context, r BuyRequest) (Bought, error) {
	it.bought++
	return Bought{}, it.buyErr
}

// TestBatchWorkerFinish: an item is created and bought (or only created without a buy), a
// shipment an earlier run bought is not bought again, a refused buy fails the item with its
// error; the batch completes, with BATCH_COMPLETED linked to its label document, when its last
// item finishes, and not before.
func TestBatchWorkerFinish(t *testing.T) {
	refused := &RateError{Code: CodeNoRates, Message: "no rates"}
	tests := []struct {
		name        string
		buy         string
		shipment    *Shipment
		buyErr      error
		pending     int
		wantStatus  string
		wantBought  int
		wantEmitted bool
	}{
		{"bought, others pending", "CHEAPEST", nil, nil, 2, ItemPurchased, 1, false},
		{"bought, the last", "CHEAPEST", nil, nil, 0, ItemPurchased, 1, true},
		{"created only", "", nil, nil, 0, ItemCreated, 0, true},
		{"bought by an earlier run", "CHEAPEST", &Shipment{ID: "shp_1", Status: StatusPurchased}, nil, 1, ItemPurchased, 0, false},
		{"buy refused", "CHEAPEST", nil, refused, 0, ItemFailed, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &workerStore{shipment: tt.shipment, pending: tt.pending}
			items := &workerItems{buyErr: tt.buyErr}
			w := &BatchWorker{Store: st, Items: items, Creator: items, Buyer: items,
				ItemErrors: func(err error) (json.RawMessage, error) { return json.Marshal(err.Error()) },
				Link:       func(batchID string) string { return "https://example.com/documents/batches/" + batchID },
				Now:        func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }}
			c := BatchClaim{BatchID: "b1", AccountID: "a", ShipmentID: "shp_1", Body: `{}`, Buy: tt.buy, Attempts: 1}
			if err := w.finish(context.Background(), c); err != nil {
				t.Fatalf("finish = %v", err)
			}
			if st.outcome.Status != tt.wantStatus || items.bought != tt.wantBought {
				t.Errorf("outcome %+v, bought %d times; want %s, %d", st.outcome, items.bought, tt.wantStatus, tt.wantBought)
			}
			if tt.wantStatus == ItemFailed && (st.outcome.Errors == nil || st.outcome.ShipmentID != "shp_1") {
				t.Errorf("a failed item's outcome %+v; want its error and the shipment it made", st.outcome)
			}
			if (st.done != nil) != tt.wantEmitted {
				t.Fatalf("completion %+v; want one: %v", st.done, tt.wantEmitted)
			}
			if st.done == nil {
				return
			}
			var b Batch
			if err := json.Unmarshal(st.done.Payload, &b); err != nil {
				t.Fatal(err)
			}
			it := b.Items[0]
			wantLinked := tt.wantStatus == ItemPurchased
			if b.Status != BatchCompleted || b.CompletedAt == nil || !b.CompletedAt.Equal(st.done.At) || it.Status != tt.wantStatus ||
				(b.LabelURL != nil) != wantLinked || wantLinked && *b.LabelURL != "https://example.com/documents/batches/b1" {
				t.Errorf("BATCH_COMPLETED %s; want COMPLETED at %v with the item %s, linked: %v", st.done.Payload, st.done.At,
					tt.wantStatus, wantLinked)
			}
		})
	}
}
