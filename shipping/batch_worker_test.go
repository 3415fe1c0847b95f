package shipping

import (
	"context"
	"encoding/json"
	"testing"
)

// workerStore is a BatchStore of one batch: its item's shipment (nil: none yet) and how many of
// its items are pending once this one finishes.
type workerStore struct {
	BatchStore
	shipment *Shipment
	pending  int
	outcome  ItemOutcome
	emitted  any // BATCH_COMPLETED's payload; nil when the batch did not complete
}

func (st *workerStore) Shipment(ctx context.Context, accountID, id string) (*Shipment, error) {
	if st.shipment == nil {
		return nil, ErrNotFound
	}
	return st.shipment, nil
}

func (st *workerStore) CompleteBatchItem(ctx context.Context, c BatchClaim, o ItemOutcome, then func(FinishedItem) error) error {
	st.outcome = o
	return then(finishedBatch{st})
}

type finishedBatch struct{ st *workerStore }

func (f finishedBatch) Pending() int { return f.st.pending }

func (f finishedBatch) Complete(ctx context.Context, view func(*Batch) any) error {
	f.st.emitted = view(&Batch{ID: "b1", Status: BatchCompleted, Purchased: 1})
	return nil
}

// workerItems makes an OPEN shipment with one rate, and buys with buyErr.
type workerItems struct {
	buyErr error
	bought int
}

func (it *workerItems) Create(ctx context.Context, c BatchClaim) (*Shipment, error) {
	return &Shipment{ID: c.ShipmentID, Status: StatusOpen, ShippingRates: []Rate{{ID: "rate_1", TotalCents: 745}}}, nil
}

func (it *workerItems) Buy(ctx context.Context, c BatchClaim, s *Shipment, rate Rate) error {
	it.bought++
	return it.buyErr
}

func (it *workerItems) Errors(err error) (json.RawMessage, error) {
	return json.Marshal(err.Error())
}

func (it *workerItems) Link(batchID string) string {
	return "https://example.com/documents/batches/" + batchID
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
			w := &BatchWorker{Store: st, Items: items}
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
			b, _ := st.emitted.(*Batch)
			if (st.emitted != nil) != tt.wantEmitted || tt.wantEmitted && (b == nil || b.LabelURL == nil ||
				*b.LabelURL != "https://example.com/documents/batches/b1") {
				t.Errorf("BATCH_COMPLETED %+v; want emitted %v, linked", st.emitted, tt.wantEmitted)
			}
		})
	}
}
