package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// testRecordChecksums: a byte changed in a shipment's legible request, or in one of its quotes,
// outside waybill is an error naming the shipment wherever the record is read — the shipment,
// its label and label document, inspect — and a difference for verify; never data served.
func testRecordChecksums(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var ids []string
	for _, code := range []string{"TRKCRC1", "TRKCRC2"} {
		s := testShipment(db, acct.ID, now)
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		b, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID,
			func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
				return code, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.ID)
	}
	labelOf := func(id string) string {
		s, err := db.Shipment(ctx, acct.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.ShippingLabel.ID
	}
	labels := []string{labelOf(ids[0]), labelOf(ids[1])}
	// One byte of the recipient's name, one cent of a quote.
	for i, stmt := range []string{
		`UPDATE shipment_requests SET request = replace(request, '"name":"A"', '"name":"B"') WHERE shipment_id = $1`,
		`UPDATE shipment_quotes SET postage_cents = postage_cents + 1 WHERE shipment_id = $1 AND position = 0`,
	} {
		if res, err := sqlOf(db).ExecContext(ctx, stmt, ids[i]); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s changed %d rows; want 1", stmt, n)
		}
	}
	for i, id := range ids {
		if _, err := db.Shipment(ctx, acct.ID, id); err == nil || !strings.Contains(err.Error(), id) {
			t.Errorf("Shipment of a changed record = %v; want an error naming %s", err, id)
		}
		read := func() error { _, _, err := db.LabelDocument(ctx, acct.ID, labels[i]); return err }
		if i == 1 { // a label document prints no quote; the label shows its bought one
			read = func() error { _, err := db.Label(ctx, acct.ID, labels[i]); return err }
		}
		if err := read(); err == nil || !strings.Contains(err.Error(), id) {
			t.Errorf("the label of a changed record = %v; want an error naming %s", err, id)
		}
		if _, err := db.ShipmentRecord(ctx, id); err == nil || !strings.Contains(err.Error(), id) {
			t.Errorf("ShipmentRecord (inspect) of a changed record = %v; want an error naming %s", err, id)
		}
	}
	var got []store.Difference
	if err := db.Verify(ctx, time.Time{}, func(d store.Difference) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ids[0]: "request", ids[1]: "shipping_rates"}
	if len(got) != 2 || want[got[0].ID] != got[0].Field || want[got[1].ID] != got[1].Field {
		t.Errorf("Verify = %v; want %v", got, want)
	}
}
