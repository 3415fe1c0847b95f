package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// TestMarkCommercialInvoices: migration 027's Go step marks the labels of the international
// shipments stored before it — packed, and stored before migration 024 (the request column) —
// and only them.
func TestMarkCommercialInvoices(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	la := shipping.Address{Name: "A", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	ny := shipping.Address{Name: "B", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"}
	toronto := shipping.Address{Name: "C", Street1: "100 Queen St W", City: "Toronto", State: "ON", Zip: "M5H 2N2", Country: "CA"}
	hs := "6109.10"
	info := &shipping.CustomsInfo{CustomsSigner: "A", CustomsItems: []shipping.CustomsItem{{Description: "T-shirt",
		HarmonizedSystemCode: &hs, OriginCountry: "US", Quantity: 1, Value: 20, Weight: 4, WeightUnit: "OZ"}}}
	want := map[string]bool{} // label id → commercial_invoice
	label := func(tx *sql.Tx, shipmentID string, international bool) error {
		id, rate := db.NewID(), db.NewID()
		want[id] = international
		if err := insertQuote(ctx, tx, shipmentID, rate); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier,
			service, tracking_code, status, label_format, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'POSTLINE', 'X', $5, 'PRE_TRANSIT', 'PDF', 0, 0)`, id, acct.ID, shipmentID, rate, "TRK"+id[24:])
		return err
	}
	var packed []struct {
		id            string
		international bool
	}
	for _, to := range []shipping.Address{toronto, ny} {
		s := &shipping.Shipment{ID: db.NewID(), AccountID: acct.ID, Status: shipping.StatusOpen, ShipDate: "2026-11-22",
			Origin: la, Destination: to, ReturnAddress: la, RateShoppingProfile: "default", RateShoppingStrategy: "ALL",
			LabelFormat: "PDF", CustomsInfo: info, ShippingRates: []shipping.Rate{},
			CreatedAt: shipping.Timestamp{Time: time.Now()}, UpdatedAt: shipping.Timestamp{Time: time.Now()}}
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		packed = append(packed, struct {
			id            string
			international bool
		}{s.ID, to.Country != "US"})
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range packed {
			if err := label(tx, s.id, s.international); err != nil {
				return err
			}
		}
		for _, legacy := range []struct {
			id, req       string
			international bool
		}{
			{"legacy-abroad", `{"origin":{"country":"US"},"destination":{"country":"JP"},"return_address":{},"parcel":{},
				"customs_info":{"customs_signer":"A","customs_items":[]}}`, true},
			{"legacy-home", `{"origin":{"country":"US"},"destination":{"country":"US"},"return_address":{},"parcel":{},
				"customs_info":{"customs_signer":"A","customs_items":[]}}`, false},
		} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO shipments (id, account_id, status, brand, ship_date, rate_shopping_profile,
				rate_shopping_strategy, label_format, request, created_at, updated_at) VALUES ($1, $2, $3, '', '2026-11-22', 'default',
				'ALL', 'PDF', $4, 0, 0)`, legacy.id, acct.ID, shipping.StatusPurchased, legacy.req); err != nil {
				return err
			}
			if err := label(tx, legacy.id, legacy.international); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET commercial_invoice = $1`, false); err != nil {
			return err
		}
		// As before migration 028, the requests of the shipments created here in their rows.
		if _, err := tx.ExecContext(ctx, `UPDATE shipments SET request = (SELECT request FROM shipment_requests
			WHERE shipment_id = shipments.id) WHERE request = ''`); err != nil {
			return err
		}
		return markCommercialInvoices(ctx, tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantFlags(t, db, `SELECT id, commercial_invoice FROM shipping_labels`, want)
}
