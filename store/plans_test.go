package store

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCloseOutPlans: a close-out starts from the carrier's labels still PRE_TRANSIT (the index
// on (account_id, carrier, status)) and finds their shipments by id, so its cost follows the
// labels not yet handed over, not the account's history with the carrier; its claim looks the
// labels up by id.
func TestCloseOutPlans(t *testing.T) {
	db := openTest(t)
	where, args := qualifying(1, "a", "ACME", "2026-11-26")
	claimWhere, claimArgs := qualifying(3, "a", "ACME", "2026-11-26")
	claimArgs = append([]any{"m", int64(1)}, claimArgs...)
	labelsIn := placeholders(&claimArgs, []string{"l1", "l2"})
	for _, tt := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"the day's labels", `SELECT l.shipment_id FROM ` + labelsWithShipments + ` WHERE ` + where, args,
			"USING INDEX shipping_labels_account_carrier_status (account_id=? AND carrier=? AND status=?)"},
		{"the claim", `UPDATE shipping_labels SET manifest_id = $1, updated_at = $2 WHERE id IN (SELECT l.id FROM ` +
			labelsWithShipments + ` WHERE ` + claimWhere + ` AND l.id IN (` + labelsIn + `))`, claimArgs,
			"USING INDEX sqlite_autoindex_shipping_labels_1 (id=?)"},
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
	args := []any{"a"}
	shipmentsIn := placeholders(&args, ids)
	labelArgs := []any{"a"}
	labelsIn := placeholders(&labelArgs, ids)
	pending, pendingArgs := pendingManifests("a")
	for _, tt := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"a close-out's shipments", `SELECT ` + shipmentColumns + ` FROM ` + shipmentsFrom + ` WHERE account_id = $1
			AND id IN (` + shipmentsIn + `)`, args,
			"SEARCH shipments USING INDEX sqlite_autoindex_shipments_1 (id=?)"},
		{"the labels of a page of shipments", `SELECT ` + labelColumns + ` FROM shipping_labels WHERE account_id = $1
			AND shipment_id IN (` + labelsIn + `)`, labelArgs, "USING INDEX sqlite_autoindex_shipping_labels_2 (shipment_id=?)"},
		{"labels waiting for a manifest", `SELECT COUNT(*) FROM ` + pending, pendingArgs,
			"SEARCH l USING INDEX shipping_labels_account_status (account_id=? AND status=?)"},
	} {
		if plan := queryPlan(t, db, tt.query, tt.args...); !strings.Contains(plan, tt.want) {
			t.Errorf("%s: plan\n%s\nwant %s", tt.name, plan, tt.want)
		}
	}
}
