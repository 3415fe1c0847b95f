package storetest

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// Verify finds no difference in a store its own methods wrote, across more than a page of
// shipments created at one instant; then it names each change made to a record through SQL by
// the path of the value that differs, a record it cannot read by the part unread, each once, in
// the account's (created_at, id) order, and since leaves out what was created before it.
func testVerify(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	acct := newAccount(t, db)
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var ids []string
	for range 201 {
		s := testShipment(db, acct.ID, now)
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	later := now.Add(time.Hour)
	s := testShipment(db, acct.ID, later)
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	_, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
		return "TRKVERIFY", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(since time.Time) []store.Difference {
		t.Helper()
		var out []store.Difference
		if err := db.Verify(ctx, since, func(d store.Difference) error {
			out = append(out, d)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if d := verify(time.Time{}); len(d) != 0 {
		t.Fatalf("Verify of an unchanged store = %v; want no difference", d)
	}

	for _, change := range []struct {
		stmt string
		args []any
	}{
		{`UPDATE shipment_requests SET request = replace(request, '"Austin"', '"Dallas"') WHERE shipment_id = $1`, []any{ids[0]}},
		{`UPDATE shipment_requests SET request = '{' WHERE shipment_id = $1`, []any{ids[200]}},
		{`UPDATE shipment_quotes SET total_cents = total_cents + 100 WHERE shipment_id = $1 AND id = $2`, []any{s.ID, s.ShippingRates[0].ID}},
	} {
		if _, err := sqlOf(db).ExecContext(ctx, change.stmt, change.args...); err != nil {
			t.Fatal(err)
		}
	}
	// The record's checksums catch each change: the request or the quote no longer matches.
	recent := []store.Difference{{ID: s.ID, Kind: "shipment", Field: "shipping_rates"}}
	want := append([]store.Difference{{ID: ids[0], Kind: "shipment", Field: "request"},
		{ID: ids[200], Kind: "shipment", Field: "request"}}, recent...)
	if got := verify(time.Time{}); !reflect.DeepEqual(got, want) {
		t.Errorf("Verify after the changes = %v;\nwant %v", got, want)
	}
	if got := verify(later); !reflect.DeepEqual(got, recent) {
		t.Errorf("Verify since %v = %v;\nwant %v", later, got, recent)
	}
}
