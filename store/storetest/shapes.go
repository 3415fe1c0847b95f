package storetest

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/store"
)

// TodaysShapes: migration 039 rewrites rows stored in shapes the store no longer reads, and the
// store reads what it wrote as it read the old shapes before: a carrier version without an
// outline serves the outline of its card, a line item's rate metadata of the older shape is
// shown in today's, and an Idempotency-Key claimed without an answer is forgotten. reopen opens
// the database (migrating it) with a plain pool on it.
func TodaysShapes(t *testing.T, reopen func() (*store.DB, *sql.DB)) {
	ctx := context.Background()
	db := register(reopen())
	acct := newAccount(t, db)
	card := testCard(1_000_000)
	card.Code = "ACME"
	if err := db.SeedCarriers(ctx, []carrier.Card{*card}); err != nil {
		t.Fatal(err)
	}
	before, err := db.Carrier(ctx, "ACME")
	if err != nil || len(before.Versions) != 1 {
		t.Fatalf("Carrier(ACME) = %+v, %v; want one version", before, err)
	}
	const older = `{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19},{"type":"DAS","amount":3.95}]}`
	err = inTx(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		// The rows as stored before: each statement but the first and the last names the account.
		for i, stmt := range []string{
			`UPDATE carrier_versions SET outline = NULL`,
			`INSERT INTO invoices (id, account_id, status, currency, invoice_number, period_start, period_end, total_cents,
				deferred_cents, created_at, updated_at) VALUES ('inv-older', $1, 'DRAFT', 'USD', 'OLDER-1', '2020-01-01',
				'2020-01-31', 1000, 0, 0, 0)`,
			`INSERT INTO billing_line_items (id, account_id, invoice_id, type, carrier, service, tracking_code, description,
				postage_cents, surcharges_cents, total_cents, shipping_rate_metadata, created_at)
				VALUES ('li-older', $1, 'inv-older', 'POSTAGE', 'POSTLINE', 'GROUND', 'TRK1', 'Postage', 586, 414, 1000, '` + older + `', 0)`,
			`INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, shipment_id, response, created_at)
				VALUES ($1, 'claimed', 'f', 's', '', 0)`,
			`DELETE FROM schema_migrations WHERE version = 39`,
		} {
			args := []any{acct.ID}
			if i == 0 || i == 4 {
				args = nil
			}
			if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db = register(reopen())

	if after, err := db.Carrier(ctx, "ACME"); err != nil || len(after.Versions) != 1 ||
		!reflect.DeepEqual(after.Versions[0].Card, before.Versions[0].Card) {
		t.Errorf("the version stored without an outline reads %+v (%v); want its outline as before, %+v",
			after.Versions[0].Card, err, before.Versions[0].Card)
	}
	_, _, items, _, err := db.InvoiceWithItems(ctx, acct.ID, "inv-older", 0)
	if err != nil || len(items) != 1 {
		t.Fatalf("InvoiceWithItems = %+v, %v; want the line item", items, err)
	}
	const today = `{"usps_zone":8,"billable_weight":31,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":31,` +
		`"dim_factor":166,"dim_threshold":1728,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL",` +
		`"surcharge":{"amount":0.19,"currency":"USD"}},{"surcharge_type":"DAS","surcharge":{"amount":3.95,"currency":"USD"}}]}`
	wantSurcharges := []billing.Surcharge{{Type: "FUEL", AmountCents: 19}, {Type: "DAS", AmountCents: 395}}
	if it := items[0]; string(it.ShippingRateMetadata) != today || !reflect.DeepEqual(it.Surcharges, wantSurcharges) {
		t.Errorf("the line item of the older shape reads %s, %+v; want %s, %+v", it.ShippingRateMetadata, it.Surcharges,
			today, wantSurcharges)
	}
	var keys int
	if err := sqlOf(db).QueryRowContext(ctx, `SELECT COUNT(*) FROM idempotency_keys WHERE idempotency_key = 'claimed'`).
		Scan(&keys); err != nil || keys != 0 {
		t.Errorf("keys claimed without an answer after migration 039: %d (%v); want none", keys, err)
	}
}
