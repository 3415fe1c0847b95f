package shipping

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// buyStore is a BuyStore whose one reservation records with recordErr, and whose void queue
// fails with queueErr.
type buyStore struct {
	BuyStore
	recordErr, queueErr error
	queued              []SoldLabel
	released            int
}

type buyReservation struct{ st *buyStore }

func (st *buyStore) ReserveBuy(ctx context.Context, r BuyRequest) (Reservation, error) {
	return buyReservation{st}, nil
}

func (r buyReservation) Key() (StoredKey, bool)          { return StoredKey{}, false }
func (r buyReservation) OrderShipments() []OrderShipment { return nil }

func (st *buyStore) QueueVoid(ctx context.Context, v SoldLabel) error {
	if st.queueErr != nil {
		return st.queueErr
	}
	st.queued = append(st.queued, v)
	return nil
}

func (r buyReservation) Held() (*Shipment, *Rate) {
	return &Shipment{ID: "shp_1", Status: StatusOpen, ShipDate: "2026-11-26"}, &Rate{ID: "rate_1", Carrier: "ACME", Service: "GROUND"}
}

func (r buyReservation) LabelID() string { return "lbl_1" }

func (r buyReservation) Prepare(context.Context, Purchase) error { return nil }

func (r buyReservation) Record(ctx context.Context, code string, check func(Reservation) error) (*Shipment, string, error) {
	if r.st.recordErr != nil {
		return nil, "", r.st.recordErr
	}
	return &Shipment{ID: "shp_1", Status: StatusPurchased}, "{}", nil
}

func (r buyReservation) Release(context.Context) error { r.st.released++; return nil }

// soldCarrier sells AC123456789 and records the labels voided at it.
type soldCarrier struct {
	Carrier
	mode   PurchaseMode
	mu     sync.Mutex
	voided []string
}

func (c *soldCarrier) PurchaseMode() PurchaseMode { return c.mode }

func (c *soldCarrier) Purchase(ctx context.Context, req PurchaseRequest) (string, error) {
	return "AC123456789", nil
}

func (c *soldCarrier) Void(ctx context.Context, code string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.voided = append(c.voided, code)
	return nil
}

// TestBuyerRecordFails: a label the carrier sold whose recording failed is never kept: it is
// queued to be voided (the void worker retries it). When even the queue cannot be written, a
// label sold outside waybill is kept in memory until the queue takes it (its attempt covers a
// crash meanwhile); a stored carrier's is voided at once. The reservation is released either
// way. A number another label holds is not voided (that would void the other label). A
// recorded buy voids nothing.
func TestBuyerRecordFails(t *testing.T) {
	lost, down := errors.New("the shipment changed"), errors.New("database is down")
	tests := []struct {
		name               string
		mode               PurchaseMode
		recordErr, queue   error
		wantQueued, voided int
	}{
		{"recorded", SellsOutside, nil, nil, 0, 0},
		{"record fails, void queued", SellsOutside, lost, nil, 1, 0},
		{"record and queue fail, queued once the queue takes it", SellsOutside, lost, down, 1, 0},
		{"a stored carrier's: record and queue fail, voided at once", SellsNothing, lost, down, 0, 1},
		{"number taken, nothing voided", SellsOutside, ErrTrackingNumberTaken, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &buyStore{recordErr: tt.recordErr, queueErr: tt.queue}
			c := &soldCarrier{mode: tt.mode}
			b := &Buyer{Store: st, Now: time.Now, Carrier: func(context.Context, string) (Carrier, bool, error) { return c, true, nil }}
			got, err := b.Buy(context.Background(), BuyRequest{AccountID: "a", ShipmentID: "shp_1", RateID: "rate_1"})
			if !errors.Is(err, tt.recordErr) || tt.recordErr == nil && got.Shipment == nil {
				t.Fatalf("Buy = %+v, %v; want %v", got, err, tt.recordErr)
			}
			if tt.queue != nil && len(st.queued) == 0 { // the database takes writes again
				st.queueErr = nil
				if err := b.QueueUnqueued(context.Background()); err != nil {
					t.Fatalf("QueueUnqueued once the queue takes writes = %v", err)
				}
			}
			if len(st.queued) != tt.wantQueued || len(c.voided) != tt.voided {
				t.Errorf("queued %v, voided at the carrier %v; want %d and %d", st.queued, c.voided, tt.wantQueued, tt.voided)
			}
			if len(st.queued) == 1 && st.queued[0] != (SoldLabel{AccountID: "a", ShipmentID: "shp_1", LabelID: "lbl_1",
				Carrier: "ACME", TrackingCode: "AC123456789", durable: true}) {
				t.Errorf("queued %+v", st.queued[0])
			}
			if wantReleased := map[bool]int{true: 1, false: 0}[tt.recordErr != nil]; st.released != wantReleased {
				t.Errorf("released %d times, want %d", st.released, wantReleased)
			}
		})
	}
}

// checkReservation is a Reservation as read, for BuyRequest.Check.
type checkReservation struct {
	Reservation
	key    *StoredKey
	s      *Shipment
	rate   *Rate
	orders []OrderShipment
}

func (c checkReservation) Key() (StoredKey, bool) {
	if c.key == nil {
		return StoredKey{}, false
	}
	return *c.key, true
}
func (c checkReservation) Held() (*Shipment, *Rate)        { return c.s, c.rate }
func (c checkReservation) OrderShipments() []OrderShipment { return c.orders }

// TestBuyRequestCheck: a key used for another request is refused before anything else; a key
// with its answer replays it; otherwise the shipment must have the rate, be OPEN, and its order
// must not be shipped by a label not voided (an additional parcel may).
func TestBuyRequestCheck(t *testing.T) {
	r := BuyRequest{AccountID: "a", ShipmentID: "shp_1", RateID: "rate_1", Key: "k", Fingerprint: "f"}
	open, bought := &Shipment{ID: "shp_1", Status: StatusOpen}, &Shipment{ID: "shp_1", Status: StatusPurchased}
	forOrder := &Shipment{ID: "shp_1", Status: StatusOpen, OrderID: "o1"}
	additional := &Shipment{ID: "shp_1", Status: StatusOpen, OrderID: "o1", Additional: true}
	rate := &Rate{ID: "rate_1"}
	shipped := []OrderShipment{{ID: "shp_0", LabelStatus: LabelPreTransit}}
	tests := []struct {
		name       string
		res        checkReservation
		wantReplay bool
		wantErr    error
	}{
		{"open, no key", checkReservation{s: open, rate: rate}, false, nil},
		{"key used for another request", checkReservation{key: &StoredKey{Fingerprint: "g", Answer: bought}, s: bought, rate: rate}, false, ErrIdempotencyKeyReused},
		{"key with its answer", checkReservation{key: &StoredKey{Fingerprint: "f", Answer: bought}, s: bought, rate: rate}, true, nil},
		{"key claimed without an answer", checkReservation{key: &StoredKey{Fingerprint: "f"}, s: open, rate: rate}, false, nil},
		{"no such rate", checkReservation{s: open}, false, ErrNotFound},
		{"no such shipment", checkReservation{}, false, ErrNotFound},
		{"no such shipment, key used for another request", checkReservation{key: &StoredKey{Fingerprint: "g", Answer: bought}}, false, ErrIdempotencyKeyReused},
		{"bought already", checkReservation{s: bought, rate: rate}, false, ErrInvalidState},
		{"order shipped", checkReservation{s: forOrder, rate: rate, orders: shipped}, false, ErrOrderAlreadyShipped},
		{"order not shipped", checkReservation{s: forOrder, rate: rate}, false, nil},
		{"additional parcel of a shipped order", checkReservation{s: additional, rate: rate, orders: shipped}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replay, err := r.Check(tt.res)
			if (replay != nil) != tt.wantReplay || !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
				t.Errorf("Check = %v, %v; want replay %v, error %v", replay, err, tt.wantReplay, tt.wantErr)
			}
		})
	}
}

// pruneStore records the cutoff it was asked to prune before.
type pruneStore struct{ cutoff time.Time }

func (s *pruneStore) PruneIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	s.cutoff = cutoff
	return 0, nil
}

// TestKeyPruner: keys are forgotten once they are older than the retention, by the clock.
func TestKeyPruner(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	st := &pruneStore{}
	p := &KeyPruner{Store: st, Retention: 24 * time.Hour, Now: func() time.Time { return now }}
	if err := p.Drain(context.Background()); err != nil || !st.cutoff.Equal(now.Add(-24*time.Hour)) {
		t.Errorf("Drain = %v, cutoff %v; want keys before %v forgotten", err, st.cutoff, now.Add(-24*time.Hour))
	}
}
