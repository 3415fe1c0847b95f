package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/manifest"
	"github.com/waybill/waybill/store"
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

// testManifestSelection holds the store's queries to the one statement of which labels a
// manifest takes (manifest.Qualifies, manifest.Awaits): over labels of every kind — outbound,
// return, voided, scanned, manifested, OPEN, of two carriers, two dates and two accounts —
// PendingManifests counts exactly the labels manifest.Awaits accepts, per carrier and date in
// that order, and the close-out (manifest.Close) collects exactly those manifest.Qualifies accepts.
func testManifestSelection(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	other, err := db.CreateAccount(ctx, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var shipments []*shipping.Shipment
	buy := func(accountID, carrier, shipDate string, isReturn bool) *shipping.Shipment {
		t.Helper()
		s := testShipment(db, accountID, now)
		s.ShipDate, s.IsReturn = shipDate, isReturn
		for i := range s.ShippingRates {
			s.ShippingRates[i].Carrier = carrier
		}
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		bought, _, err := buyLabel(ctx, db, accountID, s.ID, s.ShippingRates[0].ID, func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
			return "TRK-" + s.ID, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if accountID == acct.ID {
			shipments = append(shipments, bought)
		}
		return bought
	}
	for _, carrier := range []string{"ACME", "ZED"} {
		for _, date := range []string{"2026-11-22", "2026-11-23"} {
			buy(acct.ID, carrier, date, false)
			buy(acct.ID, carrier, date, false)
			buy(acct.ID, carrier, date, true)
		}
	}
	buy(other.ID, "ACME", "2026-11-22", false)
	voided := buy(acct.ID, "ACME", "2026-11-22", false)
	if _, err := cancelShipment(ctx, db, acct.ID, voided.ID); err != nil {
		t.Fatal(err)
	}
	scanned := buy(acct.ID, "ACME", "2026-11-22", false)
	if _, _, err := tracking(db).Record(ctx, "ACME", scanned.ShippingLabel.TrackingCode, shipping.TrackingEvent{
		Status: shipping.LabelInTransit, Message: "scan", OccurredAt: shipping.Timestamp{Time: now.Add(time.Minute)}, Source: "carrier"}); err != nil {
		t.Fatal(err)
	}
	open := testShipment(db, acct.ID, now)
	if _, err := db.CreateShipment(ctx, open); err != nil {
		t.Fatal(err)
	}
	shipments = append(shipments, open)
	if _, err := createManifest(ctx, db, acct.ID, "ZED", "2026-11-23"); err != nil {
		t.Fatal(err)
	}

	// Every shipment as it stands now, with its label.
	current := func() []*shipping.Shipment {
		t.Helper()
		ids := make([]string, len(shipments))
		for i, s := range shipments {
			ids[i] = s.ID
		}
		got, err := db.Shipments(ctx, acct.ID, ids)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	var want []manifest.Pending
	for _, s := range current() {
		if !manifest.Awaits(s, s.ShippingLabel) {
			continue
		}
		if n := len(want); n > 0 && want[n-1].Carrier == s.ShippingLabel.Carrier && want[n-1].ShipDate == s.ShipDate {
			want[n-1].LabelCount++
			continue
		}
		want = append(want, manifest.Pending{Carrier: s.ShippingLabel.Carrier, ShipDate: s.ShipDate, LabelCount: 1})
	}
	l, err := db.PendingManifests(ctx, acct.ID, store.Page{Number: 1, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	wantPending := []manifest.Pending{{Carrier: "ACME", ShipDate: "2026-11-22", LabelCount: 2},
		{Carrier: "ACME", ShipDate: "2026-11-23", LabelCount: 2}, {Carrier: "ZED", ShipDate: "2026-11-22", LabelCount: 2}}
	if !slices.Equal(l.Items, want) || !slices.Equal(want, wantPending) || l.Total != len(want) {
		t.Errorf("PendingManifests = %v (total %d); manifest.Awaits counts %v; want %v", l.Items, l.Total, want, wantPending)
	}

	before := current()
	m, err := createManifest(ctx, db, acct.ID, "ACME", "2026-11-22")
	if err != nil {
		t.Fatal(err)
	}
	var qualified []string
	for _, s := range before {
		if manifest.Qualifies(s, s.ShippingLabel, "ACME", "2026-11-22") {
			qualified = append(qualified, s.ShippingLabel.ID)
		}
	}
	if got := slices.Sorted(slices.Values(m.ShippingLabelIDs)); !slices.Equal(got, slices.Sorted(slices.Values(qualified))) || len(got) != 2 {
		t.Errorf("the close-out collected %v; manifest.Qualifies takes %v (2 labels)", got, qualified)
	}
}
