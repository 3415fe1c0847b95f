package store

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// TestRerenderLabelled: a bought shipment whose stored renderings were made before labels showed
// commercial_invoice_url answers with it again after migration 029, exactly as rendered fresh.
func TestRerenderLabelled(t *testing.T) {
	ctx := context.Background()
	db, path := openAt(t)
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	s := boughtShipment()
	s.Status, s.ShippingLabel, s.Carrier, s.AccountID = shipping.StatusOpen, nil, "", acct.ID
	for i := range s.ShippingRates {
		s.ShippingRates[i].RateMetadata.SurchargesMetadata = []shipping.SurchargeMetadata{}
		s.ShippingRates[i].PostageCents, s.ShippingRates[i].SurchargesCents = s.ShippingRates[i].TotalCents, 0
	}
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := buyAs(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, "PL00000000000000018"); err != nil {
		t.Fatal(err)
	}
	wantShipment, err := db.ShipmentJSON(ctx, acct.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wantShipment, `"commercial_invoice_url":null`) {
		t.Fatalf("a bought shipment renders %s; want commercial_invoice_url", wantShipment)
	}

	// As stored before: the same renderings without the field, and migration 029 not applied.
	field := regexp.MustCompile(`"commercial_invoice_url":null,?`)
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, table := range []string{"shipments", "shipping_labels"} {
			var packed []byte
			id := s.ID
			if table == "shipping_labels" {
				if err := tx.QueryRowContext(ctx, `SELECT id FROM shipping_labels WHERE shipment_id = $1`, s.ID).Scan(&id); err != nil {
					return err
				}
			}
			if err := tx.QueryRowContext(ctx, `SELECT packed FROM `+table+` WHERE id = $1`, id).Scan(&packed); err != nil {
				return err
			}
			p, err := codec.AppendRendering(nil, packed)
			if err != nil {
				return err
			}
			old := field.ReplaceAll(p, nil)
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET packed = $1 WHERE id = $2`, codec.Pack(old), id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ShipmentJSON(ctx, acct.ID, s.ID); strings.Contains(got, "commercial_invoice_url") {
		t.Fatalf("the shipment as stored before still renders the field: %s", got)
	}
	db = reopenBefore(t, db, path, 29)
	if got, err := db.ShipmentJSON(ctx, acct.ID, s.ID); err != nil || got != wantShipment {
		t.Errorf("after migration 029 the shipment renders\n%s (%v)\nwant\n%s", got, err, wantShipment)
	}
}
