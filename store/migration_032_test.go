package store

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
)

// TestDropLabelsShipmentIndex: migration 032 drops the index of labels by (account_id,
// shipment_id) from a database that has it, and a shipment's label is still found, by the
// UNIQUE index on shipment_id, for its own account only.
func TestDropLabelsShipmentIndex(t *testing.T) {
	ctx := context.Background()
	db, path := openAt(t)
	s := openShipmentAt(t, db, "acme")
	other, err := db.CreateAccount(ctx, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	labelID, rateID := db.NewID(), db.NewID()
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := insertQuote(ctx, tx, s.ID, rateID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier,
			service, tracking_code, status, label_format, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'POSTLINE', 'X', 'TRK1', 'PRE_TRANSIT', 'PDF', 0, 0)`, labelID, s.AccountID, s.ID, rateID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The database as migration 031 left it.
	db = reopenBefore(t, db, path, 32, `CREATE INDEX shipping_labels_account_shipment ON shipping_labels (account_id, shipment_id)`)
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'shipping_labels_account_shipment'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after migration 032: %d indexes shipping_labels_account_shipment (%v); want 0", n, err)
	}

	// The label is found for its shipment's account, through an index, and not for another.
	for _, c := range []struct {
		account string
		want    bool
	}{{s.AccountID, true}, {other.ID, false}} {
		got := &shipping.Shipment{ID: s.ID, AccountID: c.account}
		if err := db.attachLabels(ctx, c.account, []*shipping.Shipment{got}); err != nil {
			t.Fatal(err)
		}
		if found := got.ShippingLabel != nil && got.ShippingLabel.ID == labelID; found != c.want {
			t.Errorf("attachLabels(account %s) found the label: %v; want %v", c.account, found, c.want)
		}
	}
	plan := queryPlan(t, db, `SELECT `+labelColumns+` FROM shipping_labels WHERE account_id = $1 AND shipment_id IN ($2, $3)`,
		s.AccountID, s.ID, "x")
	if !strings.Contains(plan, "(shipment_id=?)") {
		t.Errorf("labels by shipment: plan %q; want a search of the index on shipment_id", plan)
	}
}
