package store

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// awayCarrier sells a label while the database file is moved away (so that nothing can be
// written: not the label, not the void queue), and counts the voids it is asked for.
type awayCarrier struct {
	away   func()
	mu     sync.Mutex
	voided []string
}

func (c *awayCarrier) Name() string { return "AWAY" }
func (c *awayCarrier) Rates(context.Context, shipping.RateRequest) ([]shipping.Quote, error) {
	return nil, nil
}
func (c *awayCarrier) Purchase(context.Context, shipping.PurchaseRequest) (string, error) {
	c.away()
	return "AW-0001", nil
}
func (c *awayCarrier) Void(_ context.Context, code string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.voided = append(c.voided, code)
	return nil
}

// TestVoidWaitsForTheQueue: a label the carrier sold while the database takes no writes is
// neither recorded nor queued; it is not forgotten after one try either, but kept in memory,
// and once the database takes writes again the void worker queues it, ending its purchase
// attempt, and has it voided at the carrier, once.
func TestVoidWaitsForTheQueue(t *testing.T) {
	ctx := context.Background()
	db, path := openAt(t)
	defer db.Close()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	s := boughtShipment()
	s.ID, s.AccountID, s.Status, s.Carrier, s.ShippingLabel = db.NewID(), acct.ID, shipping.StatusOpen, "", nil
	for i := range s.ShippingRates {
		s.ShippingRates[i].ID, s.ShippingRates[i].ShipmentID = db.NewID(), s.ID
	}
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	c := &awayCarrier{away: func() {
		if err := os.Rename(path, path+".away"); err != nil {
			t.Error(err)
		}
	}}
	b := &shipping.Buyer{Store: db, Serials: db.Serials(), Now: db.Now,
		Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return c, true, nil }}
	if _, err := b.Buy(ctx, shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("buy while the database is away = %v; want ErrUnavailable", err)
	}
	w := &shipping.VoidWorker{Queue: db, Buyer: b, Now: time.Now}
	for range 3 { // the worker's rounds while the database is still away
		w.Drain(ctx)
	}
	if len(c.voided) != 0 {
		t.Fatalf("voided %q while the void could not be queued; want it kept for the queue", c.voided)
	}
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if len(c.voided) != 1 || c.voided[0] != "AW-0001" {
		t.Errorf("voided %q once the database is back; want AW-0001 once", c.voided)
	}
	var attempts, voids int
	db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM purchase_attempts`).Scan(&attempts)
	db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM label_voids`).Scan(&voids)
	if attempts != 0 || voids != 0 {
		t.Errorf("left %d purchase attempts and %d queued voids; want none", attempts, voids)
	}
}
