package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrandIndexPartial: migration 033 makes the index of shipments by brand hold only the
// shipments that have one, and a list filtered by brands still searches it. (That the lists
// answer the same: the store suite's ListByBrand, on both databases.)
func TestBrandIndexPartial(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// The index as migration 002 made it.
		for _, stmt := range []string{`DROP INDEX shipments_account_brand`,
			`CREATE INDEX shipments_account_brand ON shipments (account_id, brand, created_at, id)`,
			`DELETE FROM schema_migrations WHERE version = 33`} {
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
	defer db.Close()
	var def string
	if err := db.r.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'shipments_account_brand'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(def, "WHERE brand <> ''") {
		t.Errorf("after migration 033 the index is\n%s\nwant it to end WHERE brand <> ''", def)
	}

	for _, c := range []struct {
		brands []string
		want   string
	}{
		{[]string{"A"}, "USING INDEX shipments_account_brand (account_id=? AND brand=?)"},
		{[]string{"A", ""}, "USING INDEX shipments_account_created (account_id=?)"},
	} {
		from, args := shipmentWhere("shipments", "acct", ShipmentFilter{Brands: c.brands})
		var id, parent, unused int
		var detail string
		err := db.r.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT id, created_at, packed, rendered FROM `+from+` ORDER BY created_at DESC, id DESC LIMIT 50`,
			args...).Scan(&id, &parent, &unused, &detail)
		if err != nil || !strings.Contains(detail, c.want) {
			t.Errorf("list by brands %q: plan %q (%v); want %q", c.brands, detail, err, c.want)
		}
	}
}
