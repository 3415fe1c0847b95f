package store

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCloseOutPlans: a close-out starts from the carrier's labels still PRE_TRANSIT (the index
// on (account_id, carrier, status)) and finds their shipments by id, so its cost follows the
// labels not yet handed over, not the account's history with the carrier.
func TestCloseOutPlans(t *testing.T) {
	db := openTest(t)
	where, args := dayWhere("a", "2026-11-26", []string{"s1", "s2"})
	for _, tt := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"pending labels", pendingShipments, []any{"a", "ACME", "PRE_TRANSIT"},
			"USING INDEX shipping_labels_account_carrier_status (account_id=? AND carrier=? AND status=?)"},
		{"lock the day's shipments", `SELECT id FROM shipments WHERE ` + where + ` ORDER BY id`, args,
			"USING INDEX sqlite_autoindex_shipments_1 (id=?)"},
		{"read the day's shipments", `SELECT ` + shipmentColumns + ` FROM ` + shipmentsFrom + ` WHERE ` + where, args,
			"USING INDEX sqlite_autoindex_shipments_1 (id=?)"},
	} {
		if plan := queryPlan(t, db, tt.query, tt.args...); !strings.Contains(plan, tt.want) || strings.Contains(plan, "SCAN") {
			t.Errorf("%s: plan\n%s\nwant %s and no scan", tt.name, plan, tt.want)
		}
	}
}

// TestUnbilledLabelsPlan: closing an invoice reads the account's labels in the deferrable
// statuses by the index on (account_id, status, created_at), not every label it ever bought.
func TestUnbilledLabelsPlan(t *testing.T) {
	db := openTest(t)
	query, args := unbilledLabels("a", time.Now(), []string{"PRE_TRANSIT", "IN_TRANSIT"})
	plan := queryPlan(t, db, query, args...)
	if !strings.Contains(plan, "shipping_labels_account_status (account_id=? AND status=? AND created_at<?)") ||
		strings.Contains(plan, "SCAN") {
		t.Errorf("unbilled labels: plan\n%s\nwant a search of (account_id, status, created_at) and no scan", plan)
	}
}

// TestPollPlans: a poll round reads the carriers' labels still polled (an index searched by
// carrier and status), not every label the carriers have had.
func TestPollPlans(t *testing.T) {
	db := openTest(t)
	query, args := pollAccounts([]string{"ACME", "POSTLINE"}, time.Now(), time.Hour, 10)
	plan := queryPlan(t, db, query, args...)
	if !strings.Contains(plan, "carrier=? AND status=?") || strings.Contains(plan, "SCAN shipping_labels") {
		t.Errorf("accounts due for a poll: plan\n%s\nwant a search by carrier and status", plan)
	}
}

// TestPlannerStats: with migration 035's statistics SQLite looks ids up one by one rather than
// reading an account's every row, however many ids a query names, and counts the labels
// waiting for a manifest from the labels, not from every shipment the account bought.
func TestPlannerStats(t *testing.T) {
	db := openTest(t)
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = "id" + strconv.Itoa(i)
	}
	where, args := dayWhere("a", "2026-11-26", ids)
	labelArgs := []any{"a"}
	labelsIn := placeholders(&labelArgs, ids)
	for _, tt := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"a close-out's shipments", `SELECT ` + shipmentColumns + ` FROM ` + shipmentsFrom + ` WHERE ` + where, args,
			"SEARCH shipments USING INDEX sqlite_autoindex_shipments_1 (id=?)"},
		{"the labels of a page of shipments", `SELECT ` + labelColumns + ` FROM shipping_labels WHERE account_id = $1
			AND shipment_id IN (` + labelsIn + `)`, labelArgs, "USING INDEX sqlite_autoindex_shipping_labels_2 (shipment_id=?)"},
		{"labels waiting for a manifest", `SELECT COUNT(*) FROM ` + pendingManifests, []any{"a", "PRE_TRANSIT", "SHIPPING_LABEL_PURCHASED", false},
			"SEARCH l USING INDEX shipping_labels_account_status (account_id=? AND status=?)"},
	} {
		if plan := queryPlan(t, db, tt.query, tt.args...); !strings.Contains(plan, tt.want) {
			t.Errorf("%s: plan\n%s\nwant %s", tt.name, plan, tt.want)
		}
	}
}
