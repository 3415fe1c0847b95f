package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// testCarrierOutsideWriter: while a carrier takes its time to sell a label, the database takes
// other writes — no transaction is open during the call.
func testCarrierOutsideWriter(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	s := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	calling, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID,
			func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
				close(calling)
				<-release
				return "TRK-SLOW", nil
			})
		done <- err
	}()
	<-calling
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	other := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	if _, err := db.CreateShipment(wctx, other); err != nil {
		t.Errorf("a write while the carrier is called = %v; want it done at once", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("buy = %v", err)
	}
}

// voidingCarrier sells labels as its sell function says and records what it voids; its first
// refusals voids fail.
type voidingCarrier struct {
	sell     func(ctx context.Context, req shipping.PurchaseRequest) (string, error)
	mu       sync.Mutex
	refusals int
	voided   []string
}

func (c *voidingCarrier) Name() string { return "ACME" }
func (c *voidingCarrier) Rates(context.Context, shipping.RateRequest) ([]shipping.Quote, error) {
	return nil, nil
}
func (c *voidingCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	return c.sell(ctx, req)
}
func (c *voidingCarrier) Void(_ context.Context, code string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusals > 0 {
		c.refusals--
		return errors.New("try again")
	}
	c.voided = append(c.voided, code)
	return nil
}
func (c *voidingCarrier) voids() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.voided)
}

// testSoldLabelVoided: a label the carrier sold but waybill did not record — the shipment was
// cancelled during the call, or the carrier answered after the deadline — is voided at the
// carrier by the void worker, retried until the carrier agrees; the shipment keeps no label.
func testSoldLabelVoided(t *testing.T) {
	for _, tt := range []struct {
		name       string
		refusals   int
		wantErr    func(error) bool
		wantStatus string
	}{
		{"cancelled during the call", 0, func(err error) bool { return errors.Is(err, shipping.ErrReservationLost) }, shipping.StatusCancelled},
		{"answered after the deadline", 0, isCarrierError, shipping.StatusOpen},
		{"void refused twice", 2, func(err error) bool { return errors.Is(err, shipping.ErrReservationLost) }, shipping.StatusCancelled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			ctx := context.Background()
			acct := newAccount(t, db)
			s := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
			if _, err := db.CreateShipment(ctx, s); err != nil {
				t.Fatal(err)
			}
			c := &voidingCarrier{refusals: tt.refusals}
			b := &shipping.Buyer{Store: db, Serials: db.Serials(), Timeout: 50 * time.Millisecond,
				Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return c, true, nil }}
			c.sell = func(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
				if tt.wantStatus == shipping.StatusCancelled {
					if _, err := b.CancelShipment(ctx, acct.ID, req.ShipmentID); err != nil {
						t.Errorf("cancel during the call: %v", err)
					}
				} else {
					time.Sleep(200 * time.Millisecond)
				}
				return "TRK-" + req.LabelID, nil
			}
			_, err := b.Buy(ctx, shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID})
			if !tt.wantErr(err) {
				t.Fatalf("buy = %v", err)
			}
			after, err := db.Shipment(ctx, acct.ID, s.ID)
			if err != nil || after.Status != tt.wantStatus || after.ShippingLabel != nil {
				t.Fatalf("after the buy: %+v, %v; want %s without a label", after, err, tt.wantStatus)
			}
			now := time.Now()
			w := &shipping.VoidWorker{Queue: db, Buyer: b, Now: func() time.Time { return now }}
			for deadline := time.Now().Add(5 * time.Second); len(c.voids()) == 0 && time.Now().Before(deadline); {
				if err := w.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				now = now.Add(time.Hour) // past any retry's pause
				time.Sleep(20 * time.Millisecond)
			}
			if v := c.voids(); len(v) != 1 || v[0] == "" {
				t.Fatalf("voided %q; want the sold label, once", v)
			}
			if due, err := db.ClaimVoids(ctx, now.Add(24*time.Hour), time.Minute, 10); err != nil || len(due) != 0 {
				t.Errorf("voids left queued: %v, %v; want none", due, err)
			}
		})
	}
}

func isCarrierError(err error) bool {
	var ce *shipping.CarrierError
	return errors.As(err, &ce)
}

// testPurchaseHold: a reserved shipment is held from other purchases until it is recorded or
// released, or its hold runs out (its process died).
func testPurchaseHold(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	s := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	req := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID, Key: "k1", Fingerprint: "f1"}
	first, _, err := db.ReserveBuy(ctx, req, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other := req
	other.Key = "k2"
	for _, r := range []shipping.BuyRequest{req, other} {
		if _, _, err := db.ReserveBuy(ctx, r, time.Hour); !errors.Is(err, shipping.ErrPurchaseInProgress) {
			t.Errorf("reserve (key %s) while held = %v; want ErrPurchaseInProgress", r.Key, err)
		}
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.ReserveBuy(ctx, other, time.Microsecond); err != nil {
		t.Fatalf("reserve after release = %v", err)
	}
	time.Sleep(2 * time.Millisecond) // the hold runs out: its process died
	res, _, err := db.ReserveBuy(ctx, req, time.Hour)
	if err != nil {
		t.Fatalf("reserve after the hold ran out = %v", err)
	}
	if _, _, err := res.Record(ctx, "TRK-HOLD"); err != nil {
		t.Fatal(err)
	}
	if _, replay, err := db.ReserveBuy(ctx, req, time.Hour); err != nil || replay == nil || replay.ShippingLabel.TrackingCode != "TRK-HOLD" {
		t.Errorf("reserve under a used key = %v, %v; want its answer replayed", replay, err)
	}
}

var _ shipping.BuyStore = (*store.DB)(nil)
var _ shipping.VoidQueue = (*store.DB)(nil)
