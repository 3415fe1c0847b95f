package store

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// A buy reads its shipment before its transaction. A PATCH committed between that read and the
// buy's claim (here: queued before the buy in the same batch, with the clock standing still so
// updated_at cannot tell) must not leave a stale stored response: the claim sees the change and
// the buy reads the shipment again.
func TestBuyAfterConcurrentPatchStoresFreshRendering(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	acct, err := db.CreateAccount(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	addr := shipping.Address{Name: "A", Street1: "1 Main St", City: "Austin", State: "TX", Zip: "78701", Country: "US"}
	s := &shipping.Shipment{ID: db.NewID(), AccountID: acct.ID, Status: shipping.StatusOpen, ShipDate: "2026-11-22",
		Origin: addr, Destination: addr, ReturnAddress: addr, RateShoppingProfile: "default", RateShoppingStrategy: "ALL",
		LabelFormat: "PDF", CreatedAt: shipping.Timestamp{Time: now}, UpdatedAt: shipping.Timestamp{Time: now},
		ShippingRates: []shipping.Rate{{ID: db.NewID(), Carrier: "ACME", Service: "GROUND", Price: shipping.USD(745),
			TotalCents: 745, EstimatedDeliveryDate: shipping.Timestamp{Time: now}}}}
	s.ShippingRates[0].ShipmentID = s.ID
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}

	g := db.group
	g.Pause()
	taken := g.Arrived()
	waitQueued := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Microsecond) {
			if int(g.Arrived()-taken) == n {
				return
			}
			if time.Now().After(deadline) {
				g.Resume()
				t.Fatalf("call %d never queued", n)
			}
		}
	}
	var wg sync.WaitGroup
	var patchErr, buyErr error
	ref := "PO-7"
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, patchErr = db.UpdateShipmentReferences(ctx, acct.ID, s.ID, OptionalString{Set: true, Value: &ref}, OptionalString{})
	}()
	waitQueued(1) // the PATCH waits, uncommitted, so the buy reads the shipment without it
	go func() {
		defer wg.Done()
		buyErr = buyAs(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID, "TRK1")
	}()
	waitQueued(2)
	g.Resume()
	wg.Wait()
	if patchErr != nil || buyErr != nil {
		t.Fatalf("patch: %v; buy: %v", patchErr, buyErr)
	}
	stored, err := db.ShipmentJSON(ctx, acct.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := db.Shipment(ctx, acct.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderShipment(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored) != string(want) {
		t.Errorf("stored response is stale:\n got %s\nwant %s", stored, want)
	}
	if fresh.CustomReference1 == nil || *fresh.CustomReference1 != ref || fresh.Status != shipping.StatusPurchased {
		t.Errorf("shipment = %+v; want purchased with reference %s", fresh, ref)
	}
}

// boughtRendering, the buy's shortcut, is renderShipment of the bought shipment, byte for
// byte, whatever the shipment holds; given any other rendering it declines.
func TestBoughtRendering(t *testing.T) {
	ref, incoterm := `a "quoted" <ref> & é`, "DDP"
	cases := map[string]func(s *shipping.Shipment){
		"plain":                            func(s *shipping.Shipment) {},
		"references":                       func(s *shipping.Shipment) { s.CustomReference1, s.CustomReference2 = &ref, &ref },
		"return":                           func(s *shipping.Shipment) { s.IsReturn = true },
		"no quotes":                        func(s *shipping.Shipment) { s.ShippingRates = s.ShippingRates[:0] },
		"hostile id":                       func(s *shipping.Shipment) { s.ID = `shp_"],"created_at":<&>` },
		"insured":                          func(s *shipping.Shipment) {},
		"no messages (stored before them)": func(s *shipping.Shipment) { s.Messages = nil },
		"all quoted":                       func(s *shipping.Shipment) { s.Messages = []shipping.Reason{} },
		"hostile message": func(s *shipping.Shipment) {
			s.Messages = []shipping.Reason{{Carrier: "ACME", Message: `x"],"created_at":"` + s.CreatedAt.Format(shipping.TimeLayout) + `"`}}
		},
		"customs": func(s *shipping.Shipment) {
			s.CustomsInfo = &shipping.CustomsInfo{CustomsSigner: `x"],"created_at":"`, Incoterm: &incoterm,
				CustomsItems: []shipping.CustomsItem{{Description: `],"updated_at":`, OriginCountry: "US", Quantity: 1}}}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			s := boughtShipment()
			s.Status, s.ShippingLabel = shipping.StatusOpen, nil
			change(s)
			open, err := renderShipment(s)
			if err != nil {
				t.Fatal(err)
			}
			then := s.UpdatedAt
			rate := shipping.Rate{ID: "rate_x", Carrier: "POSTLINE", Service: "GROUND", Price: shipping.USD(947)}
			if len(s.ShippingRates) > 0 {
				rate = s.ShippingRates[len(s.ShippingRates)-1]
			}
			insured := int64(0)
			if name == "insured" {
				insured = 10000
			}
			purchased(s, rate, "lbl_1", trackingCodeMark, then.Add(time.Microsecond), insured)
			label, err := renderLabel(s.ShippingLabel)
			if err != nil {
				t.Fatal(err)
			}
			want, err := renderShipment(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := boughtRendering(open, s, then, label); string(got) != string(want) {
				t.Errorf("boughtRendering =\n %s\nwant\n %s", got, want)
			}
			other := s.UpdatedAt // a rendering of another time
			if got := boughtRendering(open, s, other, label); got != nil {
				t.Errorf("boughtRendering of a stale rendering = %.60s…; want nil", got)
			}
			if got := boughtRendering(want, s, then, label); got != nil {
				t.Errorf("boughtRendering of a bought rendering = %.60s…; want nil", got)
			}
		})
	}
}

// purchased makes s bought from rate, one of its quotes or one it is given for the purchase
// alone, as shipping.Purchase does.
func purchased(s *shipping.Shipment, rate shipping.Rate, labelID, code string, at time.Time, insuredCents int64) {
	rates := s.ShippingRates
	s.ShippingRates = append(slices.Clip(rates), rate)
	shipping.Purchase{LabelID: labelID, RateID: rate.ID, At: at, InsuredCents: insuredCents}.Apply(s, code)
	s.ShippingRates = rates
}
