package store

import (
	"context"
	"strings"
	"testing"
)

// TestCarrierIndexPartial: migration 036 makes the index of shipments by carrier hold only the
// shipments that have one (bought), keeps the planner's statistics for it, and a list filtered
// by carriers still searches it. (That the lists answer the same: the golden files' carrier
// filters, on both databases.)
func TestCarrierIndexPartial(t *testing.T) {
	ctx := context.Background()
	db, path := openAt(t)
	// The index as migration 021 made it.
	db = reopenBefore(t, db, path, 36, `DROP INDEX shipments_account_carrier`,
		`CREATE INDEX shipments_account_carrier ON shipments (account_id, carrier, created_at, id)`)
	var def, stat string
	if err := db.r.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'shipments_account_carrier'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(def, "WHERE carrier IS NOT NULL") {
		t.Errorf("after migration 036 the index is\n%s\nwant it to end WHERE carrier IS NOT NULL", def)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT stat FROM sqlite_stat1 WHERE idx = 'shipments_account_carrier'`).Scan(&stat); err != nil {
		t.Errorf("the index's planner statistics after migration 036: %v", err)
	}
	from, args := shipmentWhere("shipments", "acct", ShipmentFilter{Carriers: []string{"ACME"}})
	plan := queryPlan(t, db, `SELECT id, created_at, packed FROM `+from+` ORDER BY created_at DESC, id DESC LIMIT 50`, args...)
	if want := "USING INDEX shipments_account_carrier (account_id=? AND carrier=?)"; !strings.Contains(plan, want) {
		t.Errorf("list by a carrier: plan %q; want %q", plan, want)
	}
}
