package storetest

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/manifest"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

// boughtLabels creates and buys n shipments of carrier ACME shipped 2026-11-22 for the account
// and returns them with their labels.
func boughtLabels(t *testing.T, db *store.DB, accountID string, n int) []*shipping.Shipment {
	t.Helper()
	ctx := context.Background()
	var out []*shipping.Shipment
	for range n {
		s := testShipment(db, accountID, time.Now())
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		code := "TRK-" + s.ID
		bought, _, err := buyLabel(ctx, db, accountID, s.ID, s.ShippingRates[0].ID, func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
			return code, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bought)
	}
	return out
}

// testManifestsRaceChanges races close-outs with cancels and tracking events of the same
// labels: each succeeds or is refused by the state it found (nothing to manifest, the label
// manifested or no longer voidable), never fails otherwise (a deadlock on PostgreSQL); no label
// ends in two manifests, a voided label in none, and another account's labels are never
// collected.
func testManifestsRaceChanges(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	other, err := db.CreateAccount(ctx, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	theirs := boughtLabels(t, db, other.ID, 2)
	for round := range 3 {
		ss := boughtLabels(t, db, acct.ID, 9)
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 3 {
			wg.Add(3)
			go func() {
				defer wg.Done()
				_, err := createManifest(ctx, db, acct.ID, "ACME", "2026-11-22")
				if err != nil && !errors.Is(err, manifest.ErrNothingToManifest) {
					errs <- fmt.Errorf("round %d: close-out: %w", round, err)
				}
			}()
			go func() {
				defer wg.Done()
				_, err := cancelShipment(ctx, db, acct.ID, ss[i].ID)
				if err != nil && !errors.Is(err, shipping.ErrLabelManifested) && !errors.Is(err, shipping.ErrInvalidState) {
					errs <- fmt.Errorf("round %d: cancel: %w", round, err)
				}
			}()
			go func() {
				defer wg.Done()
				_, _, err := tracking(db).Record(ctx, "ACME", ss[3+i].ShippingLabel.TrackingCode, shipping.TrackingEvent{
					Status: shipping.LabelInTransit, Message: "scan", OccurredAt: shipping.Timestamp{Time: time.Now().Add(time.Minute)}, Source: "carrier"})
				if err != nil {
					errs <- fmt.Errorf("round %d: tracking event: %w", round, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	l, err := db.ListManifests(ctx, acct.ID, store.ManifestFilter{Carrier: "ACME", ShipDate: "2026-11-22"}, store.Page{Number: 1, Size: 250})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range l.Items {
		for _, id := range m.ShippingLabelIDs {
			if seen[id] {
				t.Errorf("label %s is in two manifests", id)
			}
			seen[id] = true
			lb, err := db.Label(ctx, acct.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if lb.ManifestID == nil || *lb.ManifestID != m.ID || lb.Status == shipping.LabelVoided {
				t.Errorf("label %s of manifest %s: manifest_id %v, status %s", id, m.ID, lb.ManifestID, lb.Status)
			}
		}
		if _, err := db.GetManifest(ctx, other.ID, m.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account reads manifest %s: %v; want ErrNotFound", m.ID, err)
		}
	}
	for _, s := range theirs {
		lb, err := db.Label(ctx, other.ID, s.ShippingLabel.ID)
		if err != nil || lb.ManifestID != nil {
			t.Errorf("the other account's label: manifest_id %v (%v); want none", lb.ManifestID, err)
		}
	}
}

// testCarrierTrackingEvent: a carrier's event finds only that carrier's labels.
func testCarrierTrackingEvent(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	s := boughtLabels(t, db, acct.ID, 1)[0]
	e := shipping.TrackingEvent{Status: shipping.LabelInTransit, Message: "scan", OccurredAt: shipping.Timestamp{Time: time.Now().Add(time.Minute)}, Source: "carrier"}
	if _, _, err := tracking(db).Record(ctx, "OTHER", s.ShippingLabel.TrackingCode, e); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another carrier's event: %v; want ErrNotFound", err)
	}
	if _, created, err := tracking(db).Record(ctx, "ACME", s.ShippingLabel.TrackingCode, e); err != nil || !created {
		t.Errorf("the carrier's event: created %v, %v", created, err)
	}
	if _, created, err := tracking(db).Record(ctx, "ACME", s.ShippingLabel.TrackingCode, e); err != nil || created {
		t.Errorf("the same event again: created %v, %v; want a duplicate", created, err)
	}
	if _, err := db.CarrierEventSecret(ctx, "ACME"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("secret before a rotation: %v; want ErrNotFound", err)
	}
	first, err := db.RotateCarrierEventSecret(ctx, "ACME")
	if err != nil {
		t.Fatal(err)
	}
	second, err := db.RotateCarrierEventSecret(ctx, "ACME")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.CarrierEventSecret(ctx, "ACME"); err != nil || got != second || got == first {
		t.Errorf("secret after two rotations: %q, %v; want the second", got, err)
	}
}

// testClaimPollsConcurrently: claimers racing for due labels never claim one twice, and a
// claimed label is not due again until its claim runs out.
func testClaimPollsConcurrently(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	boughtLabels(t, db, acct.ID, 12)
	now := time.Now().Add(2 * time.Hour)
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := db.ClaimPolls(ctx, acct.ID, []string{"ACME"}, now, time.Hour, time.Minute, 5)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, c := range cs {
				claimed[c.LabelID]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("label %s claimed %d times", id, n)
		}
	}
	if len(claimed) != 12 {
		t.Errorf("%d labels claimed; want all 12", len(claimed))
	}
	if accts, err := db.PollAccounts(ctx, []string{"ACME"}, now.Add(30*time.Second), time.Hour, 10); err != nil || len(accts) != 0 {
		t.Errorf("accounts due while claimed: %v, %v; want none", accts, err)
	}
	if accts, err := db.PollAccounts(ctx, []string{"ACME"}, now.Add(2*time.Minute), time.Hour, 10); err != nil || len(accts) != 1 {
		t.Errorf("accounts due after the claims ran out: %v, %v; want the one", accts, err)
	}
}

// ruleInputs is one combination of the inputs of the manifest rule: the shipment's status,
// whether it is a return and its ship date; the label's status and carrier, whether it was
// scanned and whether it is in a manifest.
type ruleInputs struct {
	shipmentStatus      string
	isReturn            bool
	shipDate            string
	labelStatus         string
	carrier             string
	scanned, manifested bool
}

// ruleCombinations are every ruleInputs.
func ruleCombinations() []ruleInputs {
	var all []ruleInputs
	for _, ss := range []string{shipping.StatusOpen, shipping.StatusPurchased, shipping.StatusCancelled} {
		for _, ret := range []bool{false, true} {
			for _, date := range []string{"2026-11-22", "2026-11-23"} {
				for _, ls := range []string{shipping.LabelPreTransit, shipping.LabelInTransit, shipping.LabelVoided} {
					for _, carrier := range []string{"ACME", "ZED"} {
						for _, scanned := range []bool{false, true} {
							for _, manifested := range []bool{false, true} {
								all = append(all, ruleInputs{ss, ret, date, ls, carrier, scanned, manifested})
							}
						}
					}
				}
			}
		}
	}
	return all
}

// shipment is the shipment and label the inputs describe, as the domain's predicate sees them.
func (in ruleInputs) shipment(id, labelID, manifestID string, scanAt time.Time) *shipping.Shipment {
	l := &shipping.Label{ID: labelID, ShipmentID: id, Status: in.labelStatus, Carrier: in.carrier}
	if in.scanned {
		l.FirstCarrierScanAt = &shipping.Timestamp{Time: scanAt}
	}
	if in.manifested {
		l.ManifestID = &manifestID
	}
	return &shipping.Shipment{ID: id, Status: in.shipmentStatus, IsReturn: in.isReturn, ShipDate: in.shipDate, ShippingLabel: l}
}

// setRuleInputs writes the inputs onto the rows of shipment s and its label.
func setRuleInputs(ctx context.Context, tx *sql.Tx, s *shipping.Shipment, in ruleInputs, manifestID string, scanAt int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE shipments SET status = $1, is_return = $2, ship_date = $3 WHERE id = $4`,
		in.shipmentStatus, in.isReturn, in.shipDate, s.ID); err != nil {
		return err
	}
	var manifested sql.NullString
	var scanned sql.NullInt64
	if in.manifested {
		manifested = sql.NullString{String: manifestID, Valid: true}
	}
	if in.scanned {
		scanned = sql.NullInt64{Int64: scanAt, Valid: true}
	}
	_, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET status = $1, carrier = $2, manifest_id = $3, first_carrier_scan_at = $4
		WHERE id = $5`, in.labelStatus, in.carrier, manifested, scanned, s.ShippingLabel.ID)
	return err
}

// testManifestSelection holds the store's queries to the one statement of which labels a
// manifest takes: over every combination of the rule's inputs (ruleCombinations), on the
// account's labels and another account's, PendingManifests counts exactly the labels
// manifest.Awaits accepts, per carrier and date in that order; CloseOutCandidates reads exactly
// the shipments manifest.Qualifies accepts for each carrier and date; and StoreManifest claims a
// label exactly when manifest.Qualifies accepts it, refusing the others with ErrDayChanged.
func testManifestSelection(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	other, err := db.CreateAccount(ctx, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	// A manifest for the labels the inputs put in one.
	old, err := createManifest(ctx, db, acct.ID, "ACME", boughtLabels(t, db, acct.ID, 1)[0].ShipDate)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 36
	mine, theirs := boughtLabels(t, db, acct.ID, rows), boughtLabels(t, db, other.ID, rows)
	scanAt := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	combos := ruleCombinations()
	for round := 0; round*rows < len(combos); round++ {
		// The domain's view of the account's rows.
		var domain []*shipping.Shipment
		err := inTx(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
			domain = nil
			for i, in := range combos[round*rows : min((round+1)*rows, len(combos))] {
				for _, s := range []*shipping.Shipment{mine[i], theirs[i]} {
					if err := setRuleInputs(ctx, tx, s, in, old.ID, store.Micros(scanAt)); err != nil {
						return err
					}
				}
				domain = append(domain, in.shipment(mine[i].ID, mine[i].ShippingLabel.ID, old.ID, scanAt))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkPending(t, db, acct.ID, domain)
		checkCandidates(t, db, acct.ID, domain)
		checkClaims(t, db, acct.ID, domain, theirs)
	}
}

// checkPending checks PendingManifests against manifest.Awaits over domain, the account's rows.
func checkPending(t *testing.T, db *store.DB, accountID string, domain []*shipping.Shipment) {
	t.Helper()
	counts := map[manifest.Pending]int{}
	for _, s := range domain {
		if manifest.Awaits(s, s.ShippingLabel) {
			counts[manifest.Pending{Carrier: s.ShippingLabel.Carrier, ShipDate: s.ShipDate}]++
		}
	}
	var want []manifest.Pending
	for p, n := range counts {
		p.LabelCount = n
		want = append(want, p)
	}
	slices.SortFunc(want, func(a, b manifest.Pending) int {
		return cmp.Or(strings.Compare(a.Carrier, b.Carrier), strings.Compare(a.ShipDate, b.ShipDate))
	})
	l, err := db.PendingManifests(context.Background(), accountID, store.Page{Number: 1, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Items, want) || l.Total != len(want) {
		t.Errorf("PendingManifests = %v (total %d); manifest.Awaits counts %v", l.Items, l.Total, want)
	}
}

// checkCandidates checks CloseOutCandidates against manifest.Qualifies over domain, the
// account's rows, for each carrier and date.
func checkCandidates(t *testing.T, db *store.DB, accountID string, domain []*shipping.Shipment) {
	t.Helper()
	for _, carrier := range []string{"ACME", "ZED"} {
		for _, date := range []string{"2026-11-22", "2026-11-23"} {
			var want []string
			for _, s := range domain {
				if manifest.Qualifies(s, s.ShippingLabel, carrier, date) {
					want = append(want, s.ID)
				}
			}
			got, err := db.CloseOutCandidates(context.Background(), accountID, carrier, date)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(got))
			for i, s := range got {
				ids[i] = s.ID
			}
			if slices.Sort(ids); !slices.Equal(ids, slices.Sorted(slices.Values(want))) {
				t.Errorf("CloseOutCandidates(%s, %s) = %v; manifest.Qualifies takes %v", carrier, date, ids, want)
			}
		}
	}
}

// checkClaims closes out each of domain's rows alone for ACME on 2026-11-22, as read: the store
// claims exactly those manifest.Qualifies takes, and never another account's label.
func checkClaims(t *testing.T, db *store.DB, accountID string, domain, theirs []*shipping.Shipment) {
	t.Helper()
	ctx := context.Background()
	for i, s := range domain {
		stored, err := db.Shipments(ctx, accountID, []string{s.ID})
		if err != nil || len(stored) != 1 {
			t.Fatalf("shipment %s: %v, %v", s.ID, stored, err)
		}
		err = db.StoreManifest(ctx, closedDay(db, accountID, stored[0]))
		if want := manifest.Qualifies(s, s.ShippingLabel, "ACME", "2026-11-22"); want && err != nil {
			t.Errorf("claiming %s: %v; manifest.Qualifies takes it", describe(s), err)
		} else if !want && !errors.Is(err, manifest.ErrDayChanged) {
			t.Errorf("claiming %s: %v; want ErrDayChanged", describe(s), err)
		}
		theirsNow, err := db.Shipments(ctx, theirs[i].AccountID, []string{theirs[i].ID})
		if err != nil || len(theirsNow) != 1 {
			t.Fatalf("shipment %s: %v, %v", theirs[i].ID, theirsNow, err)
		}
		theirsNow[0].AccountID = accountID
		if err := db.StoreManifest(ctx, closedDay(db, accountID, theirsNow[0])); !errors.Is(err, manifest.ErrDayChanged) {
			t.Errorf("claiming another account's label %s: %v; want ErrDayChanged", theirs[i].ShippingLabel.ID, err)
		}
	}
}

// closedDay is a close-out of the account's shipment s alone, for ACME on 2026-11-22.
func closedDay(db *store.DB, accountID string, s *shipping.Shipment) manifest.Closed {
	now := time.UnixMicro(db.Now().UnixMicro()).UTC()
	id := db.NewID()
	collected := *s
	l := *s.ShippingLabel
	l.ManifestID, l.UpdatedAt = &id, shipping.Timestamp{Time: now}
	collected.ShippingLabel = &l
	return manifest.Closed{AccountID: accountID, Read: []*shipping.Shipment{s}, Collected: []*shipping.Shipment{&collected},
		View: manifest.View{ID: id, Carrier: "ACME", ShipDate: "2026-11-22", Status: manifest.StatusCreated, LabelCount: 1,
			ShippingLabelIDs: []string{l.ID}, CreatedAt: shipping.Timestamp{Time: now}},
		PDF: []byte("%PDF-1.4"), CSV: []byte("tracking_code\n"), Topic: webhook.TopicManifestCreated, Payload: json.RawMessage(`{}`)}
}

// describe names the rule's inputs of shipment s and its label.
func describe(s *shipping.Shipment) string {
	l := s.ShippingLabel
	return fmt.Sprintf("{shipment %s return=%v %s; label %s %s scanned=%v manifested=%v}", s.Status, s.IsReturn, s.ShipDate,
		l.Status, l.Carrier, l.FirstCarrierScanAt != nil, l.ManifestID != nil)
}
