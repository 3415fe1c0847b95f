package carrier

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
)

func carrierByName(t testing.TB, name string) shipping.Carrier {
	t.Helper()
	for _, c := range SampleCarriers() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no sample carrier %s", name)
	return nil
}

func quoteFor(quotes []shipping.Quote, service string) (shipping.Quote, bool) {
	for _, q := range quotes {
		if q.Service == service {
			return q, true
		}
	}
	return shipping.Quote{}, false
}

func TestSampleCarriers(t *testing.T) {
	if n := len(SampleCarriers()); n < 4 {
		t.Fatalf("len(SampleCarriers()) = %d; want at least 4", n)
	}
	var services []string
	for _, c := range SampleCarriers() {
		quotes, err := c.Rates(context.Background(), shipping.RateRequest{ShipDate: "2026-11-23", LengthIn: 4, WidthIn: 4, HeightIn: 2, WeightOz: 8, Zone: 3})
		if err != nil {
			t.Fatalf("%s.Rates: %v", c.Name(), err)
		}
		for _, q := range quotes {
			services = append(services, q.Service)
		}
	}
	for _, s := range []string{"REGEA", "REGWE", "REGSL"} {
		if !slices.Contains(services, s) {
			t.Errorf("services %v lack %s", services, s)
		}
	}
}

func TestSurcharges(t *testing.T) {
	pc := carrierByName(t, "PARCELCO") // fuel 14.5 %, DAS $3.95, EDAS $4.95
	tests := []struct {
		area string
		want []shipping.Surcharge
	}{
		{"", []shipping.Surcharge{{Type: "FUEL", AmountCents: 131}}},
		{"DAS", []shipping.Surcharge{{Type: "FUEL", AmountCents: 131}, {Type: "DAS", AmountCents: 395}}},
		{"EDAS", []shipping.Surcharge{{Type: "FUEL", AmountCents: 131}, {Type: "EDAS", AmountCents: 495}}},
	}
	for _, tt := range tests {
		quotes, err := pc.Rates(context.Background(), shipping.RateRequest{ShipDate: "2026-11-23", LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: 4, Zone: 1, AreaSurcharge: tt.area, AreaSurchargeFromProfile: true})
		if err != nil {
			t.Fatal(err)
		}
		q, _ := quoteFor(quotes, "GROUND")
		// GROUND, 4 oz, zone 1: $9.05; fuel 14.5 % = 131.2 cents.
		if q.PostageCents != 905 || !slices.Equal(q.Surcharges, tt.want) {
			t.Errorf("GROUND with %q: postage %d, surcharges %v; want 905, %v", tt.area, q.PostageCents, q.Surcharges, tt.want)
		}
		if want := q.PostageCents + q.SurchargesCents(); q.TotalCents() != want {
			t.Errorf("TotalCents() = %d; want %d", q.TotalCents(), want)
		}
		if want := (q.TotalCents()*125 + 50) / 100; q.RetailCents != want {
			t.Errorf("RetailCents = %d; want %d (list price 25 %% above)", q.RetailCents, want)
		}
	}
}

func TestTransitDays(t *testing.T) {
	pc := carrierByName(t, "PARCELCO")
	for _, tt := range []struct {
		zone, override            int
		ground, twoDay, overnight int
	}{
		{1, 0, 1, 2, 1},
		{8, 0, 5, 2, 1},
		{8, 3, 3, 2, 1}, // the profile's route transit replaces ground days only
	} {
		quotes, err := pc.Rates(context.Background(), shipping.RateRequest{ShipDate: "2026-11-23", LengthIn: 6, WidthIn: 4, HeightIn: 2, WeightOz: 4, Zone: tt.zone, TransitDays: tt.override})
		if err != nil {
			t.Fatal(err)
		}
		for svc, want := range map[string]int{"GROUND": tt.ground, "TWO_DAY": tt.twoDay, "OVERNIGHT": tt.overnight} {
			if q, _ := quoteFor(quotes, svc); q.TransitDays != want {
				t.Errorf("zone %d override %d: %s days = %d; want %d", tt.zone, tt.override, svc, q.TransitDays, want)
			}
		}
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		carrier      string
		l, w, h, oz  float64
		wantErr      string
		wantServices []string
	}{
		{"SPEEDSHIP", 10, 10, 10, 50 * 16, "", []string{"ECONOMY", "EXPRESS"}},
		{"SPEEDSHIP", 10, 10, 10, 50*16 + 1, "weighs more than 50 lb", nil},
		{"SPEEDSHIP", 49, 5, 5, 16, "longer than 48 in", nil},
		{"SPEEDSHIP", 40, 20, 20, 16, "length plus girth exceeds 108 in", nil},
		{"REGIONALX", 4, 4, 2, 16, "", []string{"REGEA", "REGWE", "REGSL"}},
		{"REGIONALX", 4, 4, 2, 17, "", []string{"REGEA", "REGWE"}},   // REGSL carries up to 1 lb
		{"REGIONALX", 14, 14, 14, 8, "", []string{"REGEA", "REGWE"}}, // 265 oz dimensional is above REGSL's 16
		{"PARCELCO", 100, 2, 2, 150 * 16, "", []string{"GROUND", "TWO_DAY", "OVERNIGHT"}},
		{"POSTLINE", 100, 10, 10, 16, "length plus girth exceeds 130 in", nil},
		{"POSTLINE", 1, 1, 1, 0, "must be positive", nil},
		{"POSTLINE", math.Inf(1), 1, 1, 1, "must be positive", nil},
		{"POSTLINE", 1, math.NaN(), 1, 1, "must be positive", nil},
	}
	for _, tt := range tests {
		quotes, err := carrierByName(t, tt.carrier).Rates(context.Background(),
			shipping.RateRequest{ShipDate: "2026-11-23", LengthIn: tt.l, WidthIn: tt.w, HeightIn: tt.h, WeightOz: tt.oz, Zone: 5})
		var got []string
		for _, q := range quotes {
			got = append(got, q.Service)
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s %vx%vx%v %v oz: err = %v; want %q", tt.carrier, tt.l, tt.w, tt.h, tt.oz, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.wantServices) {
			t.Errorf("%s %vx%vx%v %v oz: services %v, %v; want %v", tt.carrier, tt.l, tt.w, tt.h, tt.oz, got, err, tt.wantServices)
		}
	}
}

// TestMonotonicPrices checks every rate card: a heavier parcel or a farther zone never costs
// less.
func TestMonotonicPrices(t *testing.T) {
	for _, card := range SampleCards() {
		c := carrierByName(t, card.Code)
		for _, s := range card.Services {
			for i, row := range s.PricesCents {
				for z := 1; z < len(row); z++ {
					if row[z] < row[z-1] {
						t.Errorf("%s %s break %d oz: zone %d costs %d < zone %d %d", card.Code, s.Code, s.WeightBreaksOz[i], z+1, row[z], z, row[z-1])
					}
				}
				if i > 0 {
					if s.WeightBreaksOz[i] <= s.WeightBreaksOz[i-1] {
						t.Errorf("%s %s: weight breaks not increasing at %d", card.Code, s.Code, i)
					}
					for z := range row {
						if row[z] < s.PricesCents[i-1][z] {
							t.Errorf("%s %s zone %d: %d oz costs less than %d oz", card.Code, s.Code, z+1, s.WeightBreaksOz[i], s.WeightBreaksOz[i-1])
						}
					}
				}
			}
		}
		// And through Rates, with surcharges: totals never fall as weight or zone grow.
		prev := map[string]int64{}
		for oz := 1.0; oz <= card.MaxWeightOz; oz *= 1.7 {
			for zone := 1; zone <= 8; zone++ {
				quotes, _ := c.Rates(context.Background(), shipping.RateRequest{ShipDate: "2026-11-23", LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: oz, Zone: zone})
				for _, q := range quotes {
					if p, ok := prev[q.Service]; ok && q.TotalCents() < p {
						t.Errorf("%s %s: %v oz zone %d costs %d, less than the lighter/nearer %d", card.Code, q.Service, oz, zone, q.TotalCents(), p)
					}
					prev[q.Service] = q.TotalCents()
				}
			}
			clear(prev) // zones restart at 1 for the next weight; compare weights below
		}
		for zone := 1; zone <= 8; zone++ {
			clear(prev)
			for oz := 1.0; oz <= card.MaxWeightOz; oz *= 1.7 {
				quotes, _ := c.Rates(context.Background(), shipping.RateRequest{ShipDate: "2026-11-23", LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: oz, Zone: zone})
				for _, q := range quotes {
					if p, ok := prev[q.Service]; ok && q.TotalCents() < p {
						t.Errorf("%s %s zone %d: %v oz costs %d, less than a lighter parcel's %d", card.Code, q.Service, zone, oz, q.TotalCents(), p)
					}
					prev[q.Service] = q.TotalCents()
				}
			}
		}
	}
}

// serialCounter is a SerialSource counting in memory, for a carrier without a database.
type serialCounter map[string]int64

func (c serialCounter) NextSerial(ctx context.Context, carrier string, from, to int64) (int64, error) {
	n := max(c[carrier], from)
	c[carrier] = n + 1
	return n, nil
}

func TestTrackingCodes(t *testing.T) {
	seen := map[string]bool{}
	serials := serialCounter{}
	for _, c := range SampleCarriers() {
		service := c.(*Table).versions[0].Card.Services[0].Code
		for i := range 3 {
			code, err := c.Purchase(context.Background(), shipping.PurchaseRequest{LabelID: "l", Service: service, ShipDate: "2026-11-23", Serials: serials})
			if err != nil {
				t.Fatalf("%s.Purchase: %v", c.Name(), err)
			}
			want := c.(*Table).versions[0].Card.Tracking.Number(service, int64(1+i))
			if code != want || seen[code] {
				t.Errorf("%s.Purchase #%d = %q; want %q, a new code", c.Name(), i, code, want)
			}
			seen[code] = true
			if err := c.Void(context.Background(), code); err != nil {
				t.Errorf("%s.Void(%s) = %v; want nil", c.Name(), code, err)
			}
		}
		if _, err := c.Purchase(context.Background(), shipping.PurchaseRequest{LabelID: "x", Service: "NOPE", ShipDate: "2026-11-23", Serials: serials}); err == nil {
			t.Errorf("%s.Purchase(service NOPE) succeeded", c.Name())
		}
	}
	if err := carrierByName(t, "PARCELCO").Void(context.Background(), "SS00000000000000018"); err == nil {
		t.Errorf("PARCELCO voided a SPEEDSHIP code")
	}
}
