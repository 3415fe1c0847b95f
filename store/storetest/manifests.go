package storetest

import (
	"context"
	"errors"
	"fmt"
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
		bought, _, _, err := db.BuyLabel(ctx, accountID, s.ID, s.ShippingRates[0].ID, store.Purchase{}, nil,
			func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
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
				_, err := db.CreateManifest(ctx, acct.ID, "ACME", "2026-11-22", nil)
				if err != nil && !errors.Is(err, manifest.ErrNothingToManifest) {
					errs <- fmt.Errorf("round %d: close-out: %w", round, err)
				}
			}()
			go func() {
				defer wg.Done()
				_, err := db.CancelShipment(ctx, acct.ID, ss[i].ID, func(context.Context, *shipping.Label) error { return nil })
				if err != nil && !errors.Is(err, shipping.ErrLabelManifested) && !errors.Is(err, shipping.ErrInvalidState) {
					errs <- fmt.Errorf("round %d: cancel: %w", round, err)
				}
			}()
			go func() {
				defer wg.Done()
				_, _, err := db.AddCarrierTrackingEvent(ctx, "ACME", ss[3+i].ShippingLabel.TrackingCode, shipping.TrackingEvent{
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
	if _, _, err := db.AddCarrierTrackingEvent(ctx, "OTHER", s.ShippingLabel.TrackingCode, e); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another carrier's event: %v; want ErrNotFound", err)
	}
	if _, created, err := db.AddCarrierTrackingEvent(ctx, "ACME", s.ShippingLabel.TrackingCode, e); err != nil || !created {
		t.Errorf("the carrier's event: created %v, %v", created, err)
	}
	if _, created, err := db.AddCarrierTrackingEvent(ctx, "ACME", s.ShippingLabel.TrackingCode, e); err != nil || created {
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
