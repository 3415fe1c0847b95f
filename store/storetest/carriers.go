package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/rating"
	"github.com/waybill/waybill/store"
)

// testCard is a valid card of the carrier ACME with the services testShipment quotes, its
// tracking serials from 1 to rangeEnd.
func testCard(rangeEnd int64) *carrier.Card {
	var services []carrier.CardService
	for _, code := range []string{"GROUND", "PRIORITY", "EXPRESS"} {
		services = append(services, carrier.CardService{Code: code, Name: code, TransitDays: []int{1, 2, 3, 4, 5, 6, 7, 8},
			WeightBreaksOz: []int64{16}, PricesCents: [][]int64{{700, 700, 700, 700, 700, 700, 700, 700}}})
	}
	return &carrier.Card{Name: "Acme", EffectiveFrom: "2026-01-01", MaxWeightOz: 1120, MaxLengthIn: 108, MaxGirthIn: 165,
		Services: services, Tracking: carrier.TrackingScheme{Scheme: carrier.SchemeLuhn, Prefix: "AC", Digits: 10, RangeStart: 1, RangeEnd: rangeEnd}}
}

// Carriers: the samples are seeded once in a database's life; every put appends a version and
// none is ever changed; an invalid card or a dry run stores nothing; a carrier a profile names
// cannot be deleted; a deleted one comes back with its versions by a new put.
func testCarrierVersions(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	changes := func() int64 {
		t.Helper()
		n, err := db.CarrierChanges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 2 {
		if err := db.SeedCarriers(ctx, carrier.SampleCards()); err != nil {
			t.Fatal(err)
		}
	}
	cs, n, err := db.Carriers(ctx)
	if err != nil || len(cs) != len(carrier.SampleCards()) || n != int64(len(cs)) || changes() != n {
		t.Fatalf("after seeding twice: %d carriers, %d changes, %v; want the %d samples once", len(cs), n, err, len(carrier.SampleCards()))
	}

	put, err := putCarrier(ctx, db, "ACME", testCard(100), false)
	if err != nil || !put.Created || len(put.Carrier.Versions) != 1 || len(put.Changes) != 24 {
		t.Fatalf("first put = %+v, %v; want created at version 1 with 24 prices added", put, err)
	}
	next := testCard(100)
	next.EffectiveFrom, next.Services[0].PricesCents[0][7] = "2027-01-01", 799
	put, err = putCarrier(ctx, db, "ACME", next, true)
	if err != nil || put.Created || len(put.Changes) != 1 || *put.Changes[0].NewCents != 799 {
		t.Fatalf("dry run = %+v, %v; want one changed price", put, err)
	}
	if c, _ := db.Carrier(ctx, "ACME"); len(c.Versions) != 1 {
		t.Fatalf("a dry run stored a version: %d versions", len(c.Versions))
	}
	before := changes()
	bad := testCard(100)
	bad.Services[0].WeightBreaksOz = []int64{16, 8}
	if _, err := putCarrier(ctx, db, "ACME", bad, false); !errors.As(err, new(*shipping.ValidationError)) {
		t.Fatalf("invalid put = %v; want a ValidationError", err)
	}
	if _, err := putCarrier(ctx, db, "ACME", next, false); err != nil {
		t.Fatal(err)
	}
	if _, err := putPriceGrid(ctx, db, "ACME", "GROUND", "2026-06-01", []int64{32}, [][]int64{{1, 2, 3, 4, 5, 6, 7, 8}}, false); err != nil {
		t.Fatal(err)
	}
	if changes() != before+2 {
		t.Errorf("changes = %d; want %d (two versions, nothing for the invalid card)", changes(), before+2)
	}
	c, err := db.Carrier(ctx, "ACME")
	if err != nil || len(c.Versions) != 3 {
		t.Fatalf("Carrier = %+v, %v; want 3 versions", c, err)
	}
	// The versions read are outlines; a version's whole card is read on its own.
	whole := func(v *carrier.Version) *carrier.Card {
		t.Helper()
		card, err := db.CarrierCard(ctx, "ACME", v.Version)
		if err != nil {
			t.Fatal(err)
		}
		if loaded, err := v.Load(ctx); err != nil || !reflect.DeepEqual(loaded, card) {
			t.Errorf("version %d: Load = %v; want the stored card", v.Version, err)
		}
		return card
	}
	if v := carrier.InForce(c.Versions, "2026-07-01"); v.Version != 3 || whole(v).Services[0].WeightBreaksOz[0] != 32 {
		t.Errorf("in force on 2026-07-01: version %d; want the grid's version 3", v.Version)
	}
	if v := carrier.InForce(c.Versions, "2027-01-01"); v.Version != 2 || v.Card.Services[0].Code != "GROUND" || !reflect.DeepEqual(v.Card.Tracking, next.Tracking) {
		t.Errorf("in force on 2027-01-01: version %d, outline %+v; want 2 with its services and tracking", v.Version, v.Card)
	}
	if whole(c.Versions[0]).Services[0].PricesCents[0][7] != 700 {
		t.Error("version 1 changed")
	}

	p, err := rating.NewProfile("acme", rating.ProfileInput{Name: "Acme", Carriers: []string{"ACME"}}, []string{"ACME"}, db.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutProfile(ctx, p, p.CoverageEvent); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCarrier(ctx, "ACME"); !errors.Is(err, store.ErrCarrierInUse) {
		t.Errorf("delete of a named carrier = %v; want ErrCarrierInUse", err)
	}
	p.Carriers = []string{"PARCELCO"}
	if _, err := db.PutProfile(ctx, p, p.CoverageEvent); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCarrier(ctx, "ACME"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Carrier(ctx, "ACME"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Carrier after delete = %v; want ErrNotFound", err)
	}
	if err := db.SeedCarriers(ctx, carrier.SampleCards()); err != nil {
		t.Fatal(err)
	}
	if put, err = putCarrier(ctx, db, "ACME", testCard(100), false); err != nil || !put.Created || len(put.Carrier.Versions) != 4 {
		t.Errorf("put after delete = created %v, %d versions, %v; want created again with 4 versions", put.Created, len(put.Carrier.Versions), err)
	}
}

// SerialsAcrossHandles buys 50 labels of one carrier with 40 serials from two handles on one
// database (two processes), four buyers at once; every sixth purchase fails after taking its
// serial. Each handle reserves serials in blocks, and the carrier is called outside any
// transaction: a failed purchase's serial is lost, never reused — every label has its own
// serial of 1 to 40, and the buys that found none left are refused as exhausted.
func SerialsAcrossHandles(t *testing.T, here, there *store.DB) {
	ctx := context.Background()
	acct := newAccount(t, here)
	if _, err := putCarrier(ctx, here, "ACME", testCard(40), false); err != nil {
		t.Fatal(err)
	}
	var shipments []*shipping.Shipment
	for range 50 {
		s := testShipment(here, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
		if _, err := here.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		shipments = append(shipments, s)
	}
	errHiccup := errors.New("carrier hiccup")
	var mu sync.Mutex
	var codes []string
	exhausted, failed := 0, 0
	var wg sync.WaitGroup
	for w := range 4 {
		db := []*store.DB{here, there}[w%2]
		c, err := db.Carrier(ctx, "ACME")
		if err != nil {
			t.Fatal(err)
		}
		carrier := carrier.NewTable("ACME", c.Versions)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(shipments); i += 4 {
				s := shipments[i]
				buy := func(ctx context.Context, s *shipping.Shipment, r shipping.Rate, labelID string, serials shipping.SerialSource) (string, error) {
					code, err := carrier.Purchase(ctx, shipping.PurchaseRequest{LabelID: labelID, Service: r.Service, ShipDate: s.ShipDate, Serials: serials})
					if err == nil && i%6 == 5 {
						return "", errHiccup
					}
					return code, err
				}
				bought, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, buy)
				mu.Lock()
				switch {
				case err == nil:
					codes = append(codes, bought.ShippingLabel.TrackingCode)
				case errors.Is(err, shipping.ErrTrackingNumbersExhausted):
					exhausted++
				case errors.Is(err, errHiccup):
					failed++
				default:
					t.Errorf("buy %d: %v", i, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	scheme := testCard(40).Tracking
	var want []string
	for n := range int64(40) {
		want = append(want, scheme.Number("GROUND", n+1))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if seen[c] || !slices.Contains(want, c) {
			t.Errorf("tracking code %q issued twice or outside the range", c)
		}
		seen[c] = true
	}
	if len(codes)+exhausted+failed != len(shipments) || len(codes)+failed > 40 || exhausted < 10 {
		t.Errorf("bought %d, %d exhausted, %d failed; want every serial used at most once, the rest exhausted", len(codes), exhausted, failed)
	}
}

// A buy whose tracking number is already a label's is refused with
// shipping.ErrTrackingNumberTaken, whether a host's carrier issued it twice or two stored
// ranges meet (loaded around PUT's check, as seeding does); nothing is bought, and the serial
// that made the number is passed over, so the next buy issues the next number instead of
// meeting the same one for ever.
func testTrackingNumberTaken(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	acme, beta := testCard(100), testCard(100)
	acme.Code, beta.Code = "ACME", "BETA"
	beta.Tracking.RangeStart = 2 // BETA's first number is ACME's second
	if err := db.SeedCarriers(ctx, []carrier.Card{*acme, *beta}); err != nil {
		t.Fatal(err)
	}
	buyFrom := func(code string) purchaseFunc {
		c, err := db.Carrier(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		carrier := carrier.NewTable(code, c.Versions)
		return func(ctx context.Context, s *shipping.Shipment, r shipping.Rate, labelID string, serials shipping.SerialSource) (string, error) {
			return carrier.Purchase(ctx, shipping.PurchaseRequest{LabelID: labelID, Service: r.Service, ShipDate: s.ShipDate, Serials: serials})
		}
	}
	hostCarrier := func(code string) purchaseFunc {
		return func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
			return code, nil
		}
	}
	number := func(serial int64) string { return acme.Tracking.Number("GROUND", serial) }
	for i, step := range []struct {
		carrier string
		buy     purchaseFunc
		want    string // the tracking number bought; "" for ErrTrackingNumberTaken
	}{
		{"ACME", buyFrom("ACME"), number(1)},
		{"ACME", buyFrom("ACME"), number(2)},
		{"BETA", buyFrom("BETA"), ""}, // serial 2: ACME's
		{"BETA", buyFrom("BETA"), number(3)},
		{"HOST", hostCarrier(number(3)), ""},
		{"HOST", hostCarrier("HOST-1"), "HOST-1"},
	} {
		s := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
		for j := range s.ShippingRates {
			s.ShippingRates[j].Carrier = step.carrier
		}
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		bought, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, step.buy)
		if step.want == "" {
			if !errors.Is(err, shipping.ErrTrackingNumberTaken) {
				t.Fatalf("buy %d (%s) = %v; want ErrTrackingNumberTaken", i+1, step.carrier, err)
			}
			after, err := db.Shipment(ctx, acct.ID, s.ID)
			if err != nil || after.Status != shipping.StatusOpen || after.ShippingLabel != nil {
				t.Fatalf("after buy %d was refused: shipment %+v, %v; want it OPEN without a label", i+1, after, err)
			}
			continue
		}
		if err != nil || bought.ShippingLabel.TrackingCode != step.want {
			t.Fatalf("buy %d (%s) = %v; want tracking number %s", i+1, step.carrier, err, step.want)
		}
	}
	for code, want := range map[string]int64{"ACME": 3, "BETA": 4} {
		if c, err := db.Carrier(ctx, code); err != nil || c.NextSerial != want {
			t.Errorf("%s next serial = %d, %v; want %d", code, c.NextSerial, err, want)
		}
	}
}

// A put whose tracking range can issue numbers another carrier's can or did is refused (a dry
// run too) with a carrier.TrackingOverlapError naming that carrier; every version of the other
// carrier counts, one replaced before today too (labels carry its numbers), a deleted carrier's
// too, and its own never.
func testTrackingRangeOverlap(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	db.Now = func() time.Time { return time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC) }
	card := func(from, to int64, effective string) *carrier.Card {
		c := testCard(to)
		c.Tracking.RangeStart, c.EffectiveFrom = from, effective
		return c
	}
	for i, step := range []struct {
		code string
		card *carrier.Card
		del  bool
		want string // the carrier the put overlaps; "" when stored
	}{
		{code: "ACME", card: card(1, 100, "2026-01-01")},
		{code: "BETA", card: card(100, 200, "2026-01-01"), want: "ACME"},
		{code: "BETA", card: card(101, 200, "2026-01-01")},
		{code: "ACME", card: card(1, 100, "2026-06-01")}, // its own range again
		{code: "ACME", card: card(150, 160, "2027-01-01"), want: "BETA"},
		{code: "ACME", card: card(300, 400, "2026-11-22")},              // ACME's 1 to 100 no longer in force
		{code: "GAMMA", card: card(1, 100, "2026-01-01"), want: "ACME"}, // but issued numbers labels carry
		{code: "BETA", card: card(500, 600, "2027-06-01")},              // a version to come: it counts
		{code: "DELTA", card: card(550, 550, "2026-01-01"), want: "BETA"},
		{code: "DELTA", card: card(180, 190, "2026-01-01"), want: "BETA"}, // BETA's 101 to 200 is still in force
		{code: "BETA", del: true},
		{code: "DELTA", card: card(180, 190, "2026-01-01"), want: "BETA"}, // a deleted carrier's rates can still be bought
		{code: "DELTA", card: card(201, 299, "2026-01-01")},
	} {
		if step.del {
			if err := db.DeleteCarrier(ctx, step.code); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, dryRun := range []bool{true, false} {
			c := *step.card
			_, err := putCarrier(ctx, db, step.code, &c, dryRun)
			var oe *carrier.TrackingOverlapError
			switch {
			case step.want == "" && err != nil:
				t.Fatalf("put %d (%s, serials %d to %d, dry run %v) = %v; want it stored", i+1, step.code,
					c.Tracking.RangeStart, c.Tracking.RangeEnd, dryRun, err)
			case step.want != "" && (!errors.As(err, &oe) || !slices.Equal(oe.Carriers, []string{step.want})):
				t.Fatalf("put %d (%s, serials %d to %d, dry run %v) = %v; want an overlap with %s", i+1, step.code,
					c.Tracking.RangeStart, c.Tracking.RangeEnd, dryRun, err, step.want)
			}
		}
	}
	// A grid's version keeps the tracking of the version it copies, and is checked the same.
	if _, err := putPriceGrid(ctx, db, "DELTA", "GROUND", "", []int64{32}, [][]int64{{1, 2, 3, 4, 5, 6, 7, 8}}, false); err != nil {
		t.Errorf("grid put of DELTA = %v; want it stored", err)
	}
}

// Storing a version, reading a carrier and checking tracking ranges read the versions'
// outlines and the one card compared with, never every stored card: with the card
// of every version no longer in force made unreadable, they all still work, and only reading
// such a card whole fails.
func testCarrierVersionsReadOnlyWhatTheyNeed(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	for i, code := range []string{"ACME", "BETA"} {
		for n := range 3 {
			card := testCard(100)
			card.Code, card.EffectiveFrom = code, fmt.Sprintf("2026-0%d-01", n+1)
			card.Tracking.Prefix = []string{"AC", "BE"}[i]
			if _, err := putCarrier(ctx, db, code, card, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Versions 1 and 2 of both are no longer in force on 2026-11-22 (the suite's clock, or later).
	if _, err := sqlOf(db).ExecContext(ctx, `UPDATE carrier_versions SET card = 'unreadable' WHERE version < 3`); err != nil {
		t.Fatal(err)
	}
	next := testCard(100)
	next.Code, next.EffectiveFrom, next.Tracking.Prefix = "ACME", "2026-12-01", "AC"
	put, err := putCarrier(ctx, db, "ACME", next, false)
	if err != nil || len(put.Carrier.Versions) != 4 || put.Carrier.Versions[3].Card.Services[0].PricesCents == nil {
		t.Fatalf("PutCarrier = %+v, %v; want a 4th version, answered whole", put.Carrier, err)
	}
	if _, err := putPriceGrid(ctx, db, "BETA", "GROUND", "2026-12-01", []int64{32}, [][]int64{{1, 2, 3, 4, 5, 6, 7, 8}}, false); err != nil {
		t.Fatalf("PutPriceGrid = %v", err)
	}
	if c, err := db.Carrier(ctx, "BETA"); err != nil || len(c.Versions) != 4 || c.Versions[0].Card.Tracking.Prefix != "BE" {
		t.Fatalf("Carrier(BETA) = %+v, %v; want 4 versions with their outlines", c, err)
	}
	if cs, _, err := db.Carriers(ctx); err != nil || len(cs) != 2 {
		t.Fatalf("Carriers = %d, %v; want 2", len(cs), err)
	}
	if _, err := db.CarrierCard(ctx, "ACME", 1); err == nil {
		t.Error("CarrierCard(ACME, 1) read an unreadable card")
	}
}

// putCarrier and putPriceGrid store a carrier version through the use case (carrier.PutCard,
// carrier.PutPriceGrid) on the store's clock.
func putCarrier(ctx context.Context, db *store.DB, code string, card *carrier.Card, dryRun bool) (carrier.Put, error) {
	return carrier.PutCard(ctx, db, code, card, dryRun, db.Now())
}

func putPriceGrid(ctx context.Context, db *store.DB, code, service, from string, breaks []int64, prices [][]int64,
	dryRun bool) (carrier.Put, error) {
	return carrier.PutPriceGrid(ctx, db, code, service, from, breaks, prices, dryRun, db.Now())
}
