package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// importedOrder imports an order with the sender's id orderID for the account and returns
// waybill's id of it.
func importedOrder(t *testing.T, db *store.DB, accountID, orderID string) string {
	t.Helper()
	ctx := context.Background()
	if _, _, err := db.EnqueueImport(ctx, accountID, []byte(`{"id":"`+orderID+`"}`), nil); err != nil {
		t.Fatal(err)
	}
	claims, err := db.ClaimImports(ctx, time.Hour, 10)
	if err != nil || len(claims) != 1 {
		t.Fatalf("ClaimImports = %d claims, %v; want 1", len(claims), err)
	}
	o := &ingest.Order{OrderID: orderID, Name: "#" + orderID, Tags: []string{}, FulfillmentOrders: []ingest.FulfillmentOrder{}}
	if _, err := db.CompleteImports(ctx, []ingest.Completion{{Claim: claims[0], Order: o}}); err != nil {
		t.Fatal(err)
	}
	l, err := db.ListOrders(ctx, accountID, orderID, store.Page{Number: 1, Size: 1})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("ListOrders(%s) = %d orders, %v; want 1", orderID, len(l.Items), err)
	}
	return l.Items[0].ID
}

// testOrderShipsOnce races buys of several shipments made for one order: exactly one buys, the
// others are refused with shipping.ErrOrderAlreadyShipped naming the winner's shipment, because
// the rule (shipping.ShipOrder) is checked inside the buy's transaction with the order locked; a
// shipment made with additional buys beside it, and once the order's label is voided another
// shipment buys again. OrderShipments shows every shipment with its label's status.
func testOrderShipsOnce(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	orderID := importedOrder(t, db, acct.ID, "O-1")
	newShipment := func(additional bool) *shipping.Shipment {
		t.Helper()
		s := testShipment(db, acct.ID, time.Now())
		s.OrderID, s.Additional = orderID, additional
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	carrier := func(_ context.Context, s *shipping.Shipment, _ shipping.Rate, _ string, _ shipping.SerialSource) (string, error) {
		time.Sleep(10 * time.Millisecond) // the carrier's round trip, while the others wait
		return "TRK-" + s.ID, nil
	}
	const buyers = 6
	racers := make([]*shipping.Shipment, buyers)
	for i := range racers {
		racers[i] = newShipment(false)
	}
	var wg sync.WaitGroup
	errs := make([]error, buyers)
	for i, s := range racers {
		wg.Go(func() {
			_, _, errs[i] = buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, carrier)
		})
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		var shipped *shipping.OrderShippedError
		switch {
		case err == nil && winner == "":
			winner = racers[i].ID
		case err == nil:
			t.Errorf("shipments %s and %s of one order both bought a label", winner, racers[i].ID)
		case !errors.As(err, &shipped):
			t.Errorf("a losing buy of the order got %v; want shipping.ErrOrderAlreadyShipped", err)
		}
	}
	if winner == "" {
		t.Fatal("no buy of the order succeeded")
	}
	for i, err := range errs {
		var shipped *shipping.OrderShippedError
		if errors.As(err, &shipped) && !slices.Equal(shipped.ShipmentIDs, []string{winner}) {
			t.Errorf("buy %d refused naming %v; want the winner %s", i, shipped.ShipmentIDs, winner)
		}
	}

	extra := newShipment(true)
	if _, _, err := buyLabel(ctx, db, acct.ID, extra.ID, extra.ShippingRates[0].ID, carrier); err != nil {
		t.Errorf("buy of an additional parcel: %v", err)
	}
	for _, id := range []string{winner, extra.ID} {
		if _, err := cancelShipment(ctx, db, acct.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	again := newShipment(false)
	if _, _, err := buyLabel(ctx, db, acct.ID, again.ID, again.ShippingRates[0].ID, carrier); err != nil {
		t.Errorf("buy once the order's labels are voided: %v", err)
	}

	got, err := db.OrderShipments(ctx, acct.ID, []string{orderID, "no-such-order"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{winner: shipping.LabelVoided, extra.ID: shipping.LabelVoided, again.ID: shipping.LabelPreTransit}
	for _, s := range racers {
		if s.ID != winner {
			want[s.ID] = ""
		}
	}
	if len(got) != 1 || len(got[orderID]) != len(want) {
		t.Fatalf("OrderShipments = %v; want the order's %d shipments only", got, len(want))
	}
	for _, s := range got[orderID] {
		if w, ok := want[s.ID]; !ok || s.LabelStatus != w {
			t.Errorf("OrderShipments: shipment %s with label %q; want %q", s.ID, s.LabelStatus, w)
		}
	}
	if st := shipping.FulfillmentStatus(got[orderID]); st != shipping.OrderFulfilled {
		t.Errorf("FulfillmentStatus = %s; want FULFILLED", st)
	}
}
