package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/rating"
	"github.com/waybill/waybill/store"
)

// testRateMetadata is the rate_metadata of testShipment's quotes.
var testRateMetadata = shipping.RateMetadata{USPSZone: 5, BillableWeight: 12, WeightMetadata: shipping.WeightMetadata{
	ActualOzWeight: 11.5, BillableOzWeight: 12, DimFactor: shipping.DimFactor, DimThreshold: shipping.DimThreshold, Volume: 48},
	SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.Money{Amount: 0.45, Currency: "USD"}}}}

// testShipment is an OPEN shipment of the account, not yet stored, with three quotes.
func testShipment(db *store.DB, accountID string, now time.Time) *shipping.Shipment {
	addr := shipping.Address{Name: "A", Street1: "1 Main St", City: "Austin", State: "TX", Zip: "78701", Country: "US"}
	s := &shipping.Shipment{ID: db.NewID(), AccountID: accountID, Status: shipping.StatusOpen, ShipDate: "2026-11-22",
		Origin: addr, Destination: addr, ReturnAddress: addr, RateShoppingProfile: "default", RateShoppingStrategy: "ALL",
		LabelFormat: "PDF", CreatedAt: shipping.Timestamp{Time: now}, UpdatedAt: shipping.Timestamp{Time: now}}
	for i, service := range []string{"GROUND", "PRIORITY", "EXPRESS"} {
		s.ShippingRates = append(s.ShippingRates, shipping.Rate{ID: db.NewID(), ShipmentID: s.ID, Carrier: "ACME",
			Service: service, Price: shipping.USD(int64(745 + i)), PostageCents: 700, SurchargesCents: int64(45 + i),
			TotalCents: int64(745 + i), RetailCents: 900, EstimatedDeliveryDays: 3 - i,
			EstimatedDeliveryDate: shipping.Timestamp{Time: now.AddDate(0, 0, 3-i)}, RateMetadata: testRateMetadata})
	}
	return s
}

// A shipment's quotes are stored with it (rows of shipment_quotes, which sqlite3 and psql read)
// and read back as given; buying one makes its label refer to that quote, and writes no row of
// rates. (Shipments stored before migration 028: LegibleRecords.)
func testShipmentRates(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	newShipment := func() *shipping.Shipment { return testShipment(db, acct.ID, now) }
	// rateRows are the quote ids its label and the quotes' rows name.
	rateRows := func(shipmentID string) []string {
		t.Helper()
		rows, err := sqlOf(db).QueryContext(ctx, `SELECT shipping_rate_id FROM shipping_labels WHERE shipment_id = $1
			UNION ALL SELECT 'quotes: ' || COUNT(*) FROM shipment_quotes WHERE shipment_id = $1`, shipmentID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		ids := []string{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	buy := func(s *shipping.Shipment, rate shipping.Rate) {
		t.Helper()
		bought, _, err := buyLabel(ctx, db, acct.ID, s.ID, rate.ID, func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
			return "TRK" + s.ID[24:], nil
		})
		if err != nil {
			t.Fatal(err)
		}
		l, err := db.Label(ctx, acct.ID, bought.ShippingLabel.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*l.ShippingRate, rate) {
			t.Errorf("label's rate = %+v; want %+v", *l.ShippingRate, rate)
		}
	}
	check := func(s *shipping.Shipment) {
		t.Helper()
		got, err := db.Shipment(ctx, acct.ID, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.ShippingRates, s.ShippingRates) {
			t.Errorf("rates read back:\n got %+v\nwant %+v", got.ShippingRates, s.ShippingRates)
		}
	}

	s := newShipment()
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	check(s)
	if ids := rateRows(s.ID); !reflect.DeepEqual(ids, []string{"quotes: 3"}) {
		t.Errorf("an unbought shipment: %v; want no label, 3 quotes", ids)
	}
	buy(s, s.ShippingRates[1])
	if ids := rateRows(s.ID); !reflect.DeepEqual(ids, []string{s.ShippingRates[1].ID, "quotes: 3"}) {
		t.Errorf("after the buy: %v; want the label naming the quote bought, the same 3 quotes", ids)
	}
	var n int
	if err := sqlOf(db).QueryRowContext(ctx, `SELECT COUNT(*) FROM shipping_rates`).Scan(&n); err == nil {
		t.Errorf("a table shipping_rates of %d rows; want none since migration 034", n)
	}

	if city, quotes := legible(t, db, s.ID); city != s.Destination.City || !reflect.DeepEqual(quotes, quotesOf(s.ShippingRates)) {
		t.Errorf("the shipment as sqlite3 or psql show it: city %q, quotes %q; want %q and %q", city, quotes,
			s.Destination.City, quotesOf(s.ShippingRates))
	}
}

// Buyers racing for one shipment's rates: exactly one buys (and only its carrier call is made),
// the others are refused as the shipment is no longer OPEN, and one label is stored. On
// PostgreSQL the buyers run side by side, so the claim's row lock is what decides.
func testBuyConcurrently(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, s := openShipment(t, db)
	var calls atomic.Int32
	carrier := func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
		calls.Add(1)
		time.Sleep(20 * time.Millisecond) // the carrier's round trip, while the others wait
		return "TRK-RACE", nil
	}
	const buyers = 8
	errs := make(chan error, buyers)
	for i := range buyers {
		go func() {
			_, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[i%3].ID, carrier)
			errs <- err
		}()
	}
	bought := 0
	for range buyers {
		switch err := <-errs; {
		case err == nil:
			bought++
		case !errors.Is(err, shipping.ErrInvalidState):
			t.Errorf("a losing buyer got %v; want shipping.ErrInvalidState", err)
		}
	}
	if bought != 1 || calls.Load() != 1 {
		t.Errorf("%d buyers bought, %d carrier calls; want 1 and 1", bought, calls.Load())
	}
	var labels int
	if err := sqlOf(db).QueryRowContext(ctx, `SELECT COUNT(*) FROM shipping_labels WHERE shipment_id = $1`, s.ID).Scan(&labels); err != nil {
		t.Fatal(err)
	}
	got, err := db.Shipment(ctx, acct.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if labels != 1 || got.Status != shipping.StatusPurchased || got.ShippingLabel == nil {
		t.Errorf("%d labels stored, shipment %s with label %v; want 1, SHIPPING_LABEL_PURCHASED with it", labels, got.Status, got.ShippingLabel)
	}
}

// testLabelChangesConcurrently races a cancel, a PATCH and two tracking events on one bought
// shipment, round after round: each must succeed or be refused by the state it found
// (shipping.ErrInvalidState), never fail otherwise. On PostgreSQL a tracking event that locked
// the label before the shipment deadlocked with a cancel or a PATCH, which lock the shipment
// first.
func testLabelChangesConcurrently(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	for round := range 12 {
		s := testShipment(db, acct.ID, time.Now())
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		code := fmt.Sprintf("TRK-%d-%s", round, s.ID)
		carrier := func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
			return code, nil
		}
		if _, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, carrier); err != nil {
			t.Fatal(err)
		}
		event := func(status string, after time.Duration) func() error {
			return func() error {
				_, _, err := tracking(db).Record(ctx, "", code, shipping.TrackingEvent{Status: status, Message: status,
					OccurredAt: shipping.Timestamp{Time: time.Now().Add(after)}, Source: "test"})
				return err
			}
		}
		ref := "z"
		changes := []func() error{
			func() error { _, err := cancelShipment(ctx, db, acct.ID, s.ID); return err },
			func() error {
				_, err := db.UpdateShipmentReferences(ctx, acct.ID, s.ID, store.OptionalString{Set: true, Value: &ref}, store.OptionalString{})
				return err
			},
			event(shipping.LabelInTransit, time.Minute),
			event(shipping.LabelDelivered, 2*time.Minute),
		}
		errs := make(chan error, len(changes))
		for _, change := range changes {
			go func() { errs <- change() }()
		}
		failed := false
		for range changes {
			if err := <-errs; err != nil && !errors.Is(err, shipping.ErrInvalidState) {
				t.Errorf("round %d: a concurrent change failed: %v", round, err)
				failed = true
			}
		}
		if failed {
			return
		}
	}
}

// testPutProfileConcurrently: concurrent PUTs of one new profile key create it exactly once
// (the others update it); on PostgreSQL each had read "no such key" and answered created.
func testPutProfileConcurrently(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	for round, wantCreated := range []int{1, 0} {
		const puts = 4
		results := make(chan error, puts)
		var created atomic.Int32
		for range puts {
			go func() {
				p, err := rating.NewProfile("race", rating.ProfileInput{Name: "Race", Carriers: []string{"POSTLINE"}},
					[]string{"POSTLINE"}, time.Now())
				if err == nil {
					var c bool
					if c, err = db.PutProfile(ctx, p, p.CoverageEvent); c {
						created.Add(1)
					}
				}
				results <- err
			}()
		}
		for range puts {
			if err := <-results; err != nil {
				t.Errorf("round %d: PutProfile: %v", round, err)
			}
		}
		if got := int(created.Load()); got != wantCreated {
			t.Errorf("round %d: %d of %d concurrent PUTs created the profile; want %d", round, got, puts, wantCreated)
		}
	}
}
