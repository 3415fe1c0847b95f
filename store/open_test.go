package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/migrate"
)

// openTest opens a fresh SQLite database for a test of package store's internals. Tests of
// the store's behaviour belong in store/storetest, which runs them on PostgreSQL too.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, _ := openAt(t)
	t.Cleanup(func() { db.Close() })
	return db
}

// openAt opens a fresh SQLite database and answers its path too, for a test that opens it
// again (reopenBefore); the caller closes it.
func openAt(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return db, path
}

// reopenBefore turns db, the database at path, into the one a migration's test starts from:
// stmts (what the database held before the migration) and the migration marked not applied, in
// one transaction. It then closes db and opens path again, which applies the migration; the
// DB it returns is closed when the test ends.
func reopenBefore(t *testing.T, db *DB, path string, version int, stmts ...string) *DB {
	t.Helper()
	ctx := context.Background()
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, stmt := range append(stmts, `DELETE FROM schema_migrations WHERE version = `+strconv.Itoa(version)) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = OpenSQLite(ctx, path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// queryPlan is SQLite's plan of query, a line per step.
func queryPlan(t *testing.T, db *DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// insertQuote inserts, through tx, a quote of shipmentID (position 0) for a label a test
// inserts to refer to: POSTLINE X at 100 cents.
func insertQuote(ctx context.Context, tx *sql.Tx, shipmentID, rateID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO shipment_quotes (shipment_id, position, id, carrier, service, currency,
		postage_cents, surcharges_cents, total_cents, retail_cents, estimated_delivery_at, estimated_delivery_days,
		usps_zone, country_zone, billable_weight, actual_oz_weight, billable_oz_weight, dim_factor, dim_threshold, volume,
		surcharges, carrier_version) VALUES ($1, 0, $2, 'POSTLINE', 'X', 'USD', 100, 0, 100, 100, 0, 3, 5, 0, 1, 1, 1, 166,
		1728, 1, '{}', 0)`, shipmentID, rateID)
	if err != nil {
		return err
	}
	return migrate.FillChecksums(ctx, tx)
}

// openShipmentAt stores an OPEN shipment, without quotes, of a new account named name in db.
func openShipmentAt(t *testing.T, db *DB, name string) *shipping.Shipment {
	t.Helper()
	acct, err := db.CreateAccount(context.Background(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	la := shipping.Address{Name: "A", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	s := &shipping.Shipment{ID: db.NewID(), AccountID: acct.ID, Status: shipping.StatusOpen, ShipDate: "2026-11-22",
		Origin: la, Destination: la, ReturnAddress: la, RateShoppingProfile: "default", RateShoppingStrategy: "ALL",
		LabelFormat: "PDF", ShippingRates: []shipping.Rate{},
		CreatedAt: shipping.Timestamp{Time: time.Now()}, UpdatedAt: shipping.Timestamp{Time: time.Now()}}
	if _, err := db.CreateShipment(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}
