package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// refuseWrites makes db refuse every insert into shipping_labels and label_voids (a disk full, a
// database gone read-only) until the returned function is called.
func refuseWrites(t *testing.T, db *store.DB) (allow func()) {
	t.Helper()
	ctx := context.Background()
	tables := []string{"shipping_labels", "label_voids"}
	var create, drop []string
	for _, table := range tables {
		if db.Dialect() == store.PostgreSQL {
			create = append(create, `CREATE TRIGGER refuse_`+table+` BEFORE INSERT ON `+table+
				` FOR EACH ROW EXECUTE FUNCTION refuse_writes()`)
			drop = append(drop, `DROP TRIGGER refuse_`+table+` ON `+table)
		} else {
			create = append(create, `CREATE TRIGGER refuse_`+table+` BEFORE INSERT ON `+table+
				` BEGIN SELECT RAISE(ABORT, 'the database refuses writes'); END`)
			drop = append(drop, `DROP TRIGGER refuse_`+table)
		}
	}
	if db.Dialect() == store.PostgreSQL {
		create = append([]string{`CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION 'the database refuses writes'; END $$`}, create...)
		drop = append(drop, `DROP FUNCTION refuse_writes()`)
	}
	for _, stmt := range create {
		if _, err := sqlOf(db).ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, stmt := range drop {
			if _, err := sqlOf(db).ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// testVoidWaitsForTheQueue: a label a carrier sold while the database refuses writes — its
// record fails, and so does the void queue — is not voided once and forgotten when that void
// fails: it is kept in memory, and once the database takes writes again the void worker queues
// it (ending its purchase attempt) and voids it at the carrier.
func testVoidWaitsForTheQueue(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, s := openShipment(t, db)
	c := &voidingCarrier{refusals: 1}
	var allow func()
	c.sell = func(context.Context, shipping.PurchaseRequest) (string, error) {
		allow = refuseWrites(t, db)
		return "TRK-UNWRITABLE", nil
	}
	b := &shipping.Buyer{Store: db, Serials: db.Serials(), Now: db.Now,
		Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return c, true, nil }}
	if _, err := b.Buy(ctx, shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID}); err == nil {
		t.Fatal("a buy whose label could not be written answered no error")
	}
	w := &shipping.VoidWorker{Queue: db, Buyer: b, Now: time.Now}
	for range 3 { // rounds while the database still refuses writes
		if err := w.Drain(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("drain while refused: %v", err)
		}
	}
	if v := c.voids(); len(v) != 0 {
		t.Fatalf("voided %q while the void could not be queued; want it kept for the queue", v)
	}
	allow()
	for round := 0; len(c.voids()) == 0 && round < 3; round++ {
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		// The carrier refuses the first void: the worker tries again when it is due.
		w.Now = func() time.Time { return time.Now().Add(time.Duration(round+1) * time.Hour) }
	}
	if v := c.voids(); len(v) != 1 || v[0] != "TRK-UNWRITABLE" {
		t.Errorf("voided %q once the database takes writes; want TRK-UNWRITABLE once", v)
	}
	attempts, err := db.ListAttempts(ctx, "", store.Page{Number: 1, Size: 10})
	if err != nil || len(attempts.Items) != 0 {
		t.Errorf("purchase attempts left: %+v, %v; want none", attempts.Items, err)
	}
}
