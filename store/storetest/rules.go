package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// Where the store's SQL filters rows by a rule of the domain, these tests enumerate every
// combination of the rule's inputs, put each in a row, and check that the SQL takes exactly the
// rows the domain's own statement of the rule takes.

// labelState is one combination of what decides whether a label may be voided.
type labelState struct {
	status                                string
	scanned, finished, manifested, billed bool
}

func (c labelState) String() string {
	return fmt.Sprintf("%s scanned=%v finished=%v manifested=%v billed=%v", c.status, c.scanned, c.finished, c.manifested, c.billed)
}

// testVoidRule: cancelling a bought shipment voids its label in SQL exactly when shipping.Cancel
// says the label is voided (CancelAndVoid), for every status and history of the label.
func testVoidRule(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	manifestID, invoiceID := db.NewID(), ""
	if _, err := sqlOf(db).ExecContext(ctx, `INSERT INTO manifests (id, account_id, carrier, ship_date, label_ids,
		label_count, pdf, pdf_sha256, csv, csv_sha256, created_at) VALUES ($1, $2, 'ACME', '2026-11-22', '[]', 0, $3, '', $3, '', 0)`,
		manifestID, acct.ID, []byte{}); err != nil {
		t.Fatal(err)
	}
	if err := db.BillingTx(ctx, func(ctx context.Context, l billing.Ledger) error {
		var err error
		invoiceID, _, err = billing.DraftFor(ctx, l, acct.ID, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var states []labelState
	for _, status := range shipping.LabelStatuses {
		for mask := range 16 {
			states = append(states, labelState{status, mask&1 != 0, mask&2 != 0, mask&4 != 0, mask&8 != 0})
		}
	}
	for i, c := range states {
		s := testShipment(db, acct.ID, now)
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		code := fmt.Sprintf("TRKVOID%04d", i)
		bought, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID,
			func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
				return code, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		labelID := bought.ShippingLabel.ID
		at := func(set bool) any {
			if set {
				return store.Micros(now)
			}
			return nil
		}
		var manifest any
		if c.manifested {
			manifest = manifestID
		}
		if _, err := sqlOf(db).ExecContext(ctx, `UPDATE shipping_labels SET status = $1, first_carrier_scan_at = $2,
			finished_at = $3, manifest_id = $4 WHERE id = $5`, c.status, at(c.scanned), at(c.finished), manifest, labelID); err != nil {
			t.Fatal(err)
		}
		if c.billed {
			if _, err := sqlOf(db).ExecContext(ctx, `INSERT INTO billing_line_items (id, account_id, invoice_id, type, label_id,
				description, postage_cents, surcharges_cents, total_cents, created_at) VALUES ($1, $2, $3, 'POSTAGE', $4, 'postage', 0, 0, 0, 0)`,
				db.NewID(), acct.ID, invoiceID, labelID); err != nil {
				t.Fatal(err)
			}
		}
		read, err := db.ShipmentToCancel(ctx, acct.ID, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		action, _ := shipping.Cancel(read.Status, read.ShippingLabel)
		want := action == shipping.CancelAndVoid
		_, err = db.RecordCancel(ctx, read, shipping.CancelAndVoid)
		if got := err == nil; got != want {
			t.Errorf("%v: the store voids it: %v (%v); the domain: %v", c, got, err, want)
		}
	}
}

// testImportRule: of two imports of one order, the order keeps the one ingest.Claim.Supersedes
// says wins, whichever completes first, for every order of their receipt times and ids.
func testImportRule(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	base := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	newID, now := db.NewID, db.Now
	defer func() { db.NewID, db.Now = newID, now }()
	n := 0
	for _, dt := range []time.Duration{-time.Microsecond, 0, time.Microsecond} {
		for _, idsAscending := range []bool{true, false} {
			for _, laterFirst := range []bool{false, true} {
				n++
				orderID := fmt.Sprint("order-rule-", n)
				ids := []string{fmt.Sprintf("imp-%03d-a", n), fmt.Sprintf("imp-%03d-b", n)}
				if !idsAscending {
					ids[0], ids[1] = ids[1], ids[0]
				}
				var claims []ingest.Claim
				for i, id := range ids {
					received := base.Add(time.Duration(i) * dt)
					db.NewID = func() string { return id }
					db.Now = func() time.Time { return received }
					if _, _, err := db.EnqueueImport(ctx, acct.ID, fmt.Appendf(nil, `{"id": %q, "i": %d}`, orderID, i), &orderID); err != nil {
						t.Fatal(err)
					}
				}
				db.NewID, db.Now = newID, now
				got, err := db.ClaimImports(ctx, time.Hour, 10)
				if err != nil || len(got) != 2 {
					t.Fatalf("ClaimImports = %d claims, %v; want 2", len(got), err)
				}
				for _, id := range ids {
					for _, c := range got {
						if c.ID == id {
							claims = append(claims, c)
						}
					}
				}
				winner := claims[0]
				if claims[1].Supersedes(claims[0]) {
					winner = claims[1]
				}
				order := []ingest.Claim{claims[0], claims[1]}
				if laterFirst {
					order[0], order[1] = order[1], order[0]
				}
				for _, c := range order {
					done := []ingest.Completion{{Claim: c, Order: &ingest.Order{OrderID: orderID, Name: c.ID,
						Tags: []string{}, FulfillmentOrders: []ingest.FulfillmentOrder{}}}}
					if stale, err := db.CompleteImports(ctx, done); err != nil || stale != 0 {
						t.Fatalf("CompleteImports = %d stale, %v", stale, err)
					}
				}
				o, err := db.OrderBySender(ctx, acct.ID, orderID)
				if err != nil {
					t.Fatal(err)
				}
				if o.Name != winner.ID {
					t.Errorf("imports %v received %v apart, completed in the order %s, %s: the order keeps %s; the domain: %s",
						ids, dt, order[0].ID, order[1].ID, o.Name, winner.ID)
				}
			}
		}
	}
}

// testPollRule: a poll round claims exactly the labels of the carriers asked whose status
// shipping.Polled says is still polled and that are due: at their poll_at, or first a while
// after their purchase.
func testPollRule(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	const first = time.Hour
	want, state := map[string]bool{}, map[string]string{}
	i := 0
	for _, status := range shipping.LabelStatuses {
		for _, pollAt := range []*time.Time{nil, new(now.Add(-time.Minute)), new(now), new(now.Add(time.Minute))} {
			for _, bought := range []time.Time{now.Add(-2 * first), now.Add(-first), now.Add(-time.Minute)} {
				for _, carrier := range []string{"ACME", "OTHER"} {
					i++
					s := testShipment(db, acct.ID, bought)
					if _, err := db.CreateShipment(ctx, s); err != nil {
						t.Fatal(err)
					}
					code := fmt.Sprintf("TRKPOLL%04d", i)
					b, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID,
						func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
							return code, nil
						})
					if err != nil {
						t.Fatal(err)
					}
					var poll any
					due := !bought.Add(first).After(now)
					if pollAt != nil {
						poll, due = store.Micros(*pollAt), !pollAt.After(now)
					}
					if _, err := sqlOf(db).ExecContext(ctx, `UPDATE shipping_labels SET status = $1, carrier = $2, poll_at = $3,
						created_at = $4 WHERE id = $5`, status, carrier, poll, store.Micros(bought), b.ShippingLabel.ID); err != nil {
						t.Fatal(err)
					}
					want[b.ShippingLabel.ID] = shipping.Polled(status) && due && carrier == "ACME"
					state[b.ShippingLabel.ID] = fmt.Sprintf("%s of %s bought %v, poll_at %v", status, carrier, bought, poll)
				}
			}
		}
	}
	claims, err := db.ClaimPolls(ctx, acct.ID, []string{"ACME"}, now, first, time.Minute, len(want))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range claims {
		got[c.LabelID] = true
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("label %s: claimed %v; the domain: %v", state[id], got[id], w)
		}
	}
}
