package store

import (
	"context"
	"strings"
	"testing"
)

// TestBrandIndexPartial: migration 033 makes the index of shipments by brand hold only the
// shipments that have one, and a list filtered by brands still searches it. (That the lists
// answer the same: the store suite's ListByBrand, on both databases.)
func TestBrandIndexPartial(t *testing.T) {
	ctx := context.Background()
	db, path := openAt(t)
	// The index as migration 002 made it.
	db = reopenBefore(t, db, path, 33, `DROP INDEX shipments_account_brand`,
		`CREATE INDEX shipments_account_brand ON shipments (account_id, brand, created_at, id)`)
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
		plan := queryPlan(t, db, `SELECT id, created_at, packed FROM `+from+` ORDER BY created_at DESC, id DESC LIMIT 50`, args...)
		if !strings.Contains(plan, c.want) {
			t.Errorf("list by brands %q: plan %q; want %q", c.brands, plan, c.want)
		}
	}
}
