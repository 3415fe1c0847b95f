package carrier

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
)

func TestInternationalRates(t *testing.T) {
	card := testCard()
	card.CountryZones = map[string]int{"CA": 1, "GB": 2}
	card.Services = append(card.Services, CardService{Code: "INTL", Name: "Intl", MaxWeightOz: 1120, International: true,
		TransitDays: []int{5, 7}, WeightBreaksOz: []int64{16, 32}, PricesCents: [][]int64{{1000, 1500}, {1200, 1800}}, DDPFeeCents: 900})
	c := NewTable("ACME", []*Version{{Version: 2, Card: card}})
	req := func(country string, edit func(*shipping.RateRequest)) shipping.RateRequest {
		r := shipping.RateRequest{Origin: *address("90058", "CA"), Destination: shipping.Address{Country: country}, LengthIn: 1, WidthIn: 1, HeightIn: 1,
			WeightOz: 10, ShipDate: "2026-03-01"}
		if edit != nil {
			edit(&r)
		}
		return r
	}
	tests := []struct {
		name       string
		req        shipping.RateRequest
		zone       int
		postage    int64
		surcharges []shipping.Surcharge
		days       int
		err        string
	}{
		{"Canada", req("CA", nil), 1, 1000, []shipping.Surcharge{{Type: "FUEL", AmountCents: 100}}, 5, ""},
		{"UK, second break", req("GB", func(r *shipping.RateRequest) { r.WeightOz = 20 }), 2, 1800, []shipping.Surcharge{{Type: "FUEL", AmountCents: 180}}, 7, ""},
		{"DIM weight", req("GB", func(r *shipping.RateRequest) { r.LengthIn, r.WidthIn, r.HeightIn = 12, 12, 3 }), 2, 0, nil, 0,
			"no service carries 42 oz (billable)"},
		{"DDP", req("CA", func(r *shipping.RateRequest) { r.DDP = true }), 1, 1000, []shipping.Surcharge{{Type: "FUEL", AmountCents: 100}, {Type: "DDP", AmountCents: 900}}, 5, ""},
		{"a return from Canada", shipping.RateRequest{Origin: shipping.Address{Country: "CA"}, Destination: *address("90058", "CA"),
			LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: 10, ShipDate: "2026-03-01"}, 1, 1000, []shipping.Surcharge{{Type: "FUEL", AmountCents: 100}}, 5, ""},
		{"country not in the card", req("JP", nil), 0, 0, nil, 0, "country not serviced"},
		{"too heavy for the card", req("CA", func(r *shipping.RateRequest) { r.WeightOz = 1500 }), 0, 0, nil, 0, "parcel weighs more than 70 lb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, ok := oneQuote(t, c, tt.req, tt.err)
			if ok && (q.Service != "INTL" || q.Zone != 0 || q.CountryZone != tt.zone || q.PostageCents != tt.postage ||
				!slices.Equal(q.Surcharges, tt.surcharges) || q.TransitDays != tt.days || q.CarrierVersion != 2) {
				t.Errorf("quote = %+v; want INTL, country zone %d, %d, %v, %d days, version 2", q, tt.zone, tt.postage, tt.surcharges, tt.days)
			}
		})
	}
	// At home, the international service never quotes.
	dom := shipping.RateRequest{Origin: *address("10001", "NY"), Destination: *address("10003", "NY"), LengthIn: 1, WidthIn: 1, HeightIn: 1,
		WeightOz: 10, Zone: 2, ShipDate: "2026-03-01"}
	quotes, err := c.Rates(context.Background(), dom)
	if err != nil || slices.ContainsFunc(quotes, func(q shipping.Quote) bool { return q.Service == "INTL" }) {
		t.Errorf("Rates(domestic) = %v, %v; want no INTL quote", quotes, err)
	}
	// A card of international services only serves no route at home: the country, not the weight.
	intl := testCard()
	intl.CountryZones = card.CountryZones
	intl.Services = slices.Clone(card.Services[len(card.Services)-1:])
	only := NewTable("ABROAD", []*Version{{Version: 1, Card: intl}})
	if _, err := only.Rates(context.Background(), dom); !errors.Is(err, ErrCountryNotServiced) {
		t.Errorf("Rates(domestic) of an international-only card = %v; want ErrCountryNotServiced", err)
	}
	// DDP on a card without a fee.
	card.Services[len(card.Services)-1].DDPFeeCents = 0
	if _, err := c.Rates(context.Background(), req("CA", func(r *shipping.RateRequest) { r.DDP = true })); !errors.Is(err, ErrDDPNotOffered) {
		t.Errorf("Rates(DDP, no fee) = %v; want ErrDDPNotOffered", err)
	}
}

func TestValidateCountryZones(t *testing.T) {
	intl := func(zones map[string]int, edit func(*CardService)) *Card {
		c := testCard()
		c.CountryZones = zones
		s := CardService{Code: "INTL", Name: "Intl", MaxWeightOz: 1120, International: true,
			TransitDays: []int{5, 7}, WeightBreaksOz: []int64{16}, PricesCents: [][]int64{{1000, 1500}}}
		if edit != nil {
			edit(&s)
		}
		c.Services = append(c.Services, s)
		return c
	}
	n := len(testCard().Services)
	p := "services[" + string(rune('0'+n)) + "]"
	tests := []struct {
		name   string
		card   *Card
		fields []string
	}{
		{"ok", intl(map[string]int{"CA": 1, "GB": 2}, nil), nil},
		{"no country zones", intl(nil, nil), []string{"country_zones"}},
		{"unknown country, US, zone 21", intl(map[string]int{"XX": 1, "US": 2, "GB": 21}, nil),
			[]string{"country_zones.GB", "country_zones.US", "country_zones.XX"}},
		{"rows shorter than the highest zone", intl(map[string]int{"CA": 1, "GB": 3}, nil),
			[]string{p + ".transit_days", p + ".prices_cents[0]"}},
		{"negative DDP fee", intl(map[string]int{"CA": 1, "GB": 2}, func(s *CardService) { s.DDPFeeCents = -1 }), []string{p + ".ddp_fee_cents"}},
		{"DDP fee at home", func() *Card {
			c := testCard()
			c.Services[0].DDPFeeCents = 100
			return c
		}(), []string{"services[0].ddp_fee_cents"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldsOf(tt.card.Validate("ACME")); !slices.Equal(got, tt.fields) {
				t.Errorf("Validate fields = %q; want %q", got, tt.fields)
			}
		})
	}
}

func TestParsePriceGridInternational(t *testing.T) {
	breaks, prices, err := ParsePriceGrid(strings.NewReader("weight_oz,zone_1,zone_2,zone_3\n16,10.00,12.50,15\n32,11,13,16.25\n"))
	if err != nil || !slices.Equal(breaks, []int64{16, 32}) || !slices.Equal(prices[1], []int64{1100, 1300, 1625}) {
		t.Fatalf("ParsePriceGrid(3 zones) = %v, %v, %v", breaks, prices, err)
	}
	card := testCard()
	card.CountryZones = map[string]int{"CA": 1, "GB": 2}
	card.Services = append(card.Services, CardService{Code: "INTL", Name: "Intl", MaxWeightOz: 1120, International: true,
		TransitDays: []int{5, 7}, WeightBreaksOz: []int64{16}, PricesCents: [][]int64{{1000, 1500}}})
	tests := []struct {
		service string
		zones   int
		fields  []string
	}{
		{"INTL", 2, nil},
		{"INTL", 3, []string{"header"}},
		{"INTL", 8, []string{"header"}},
		{card.Services[0].Code, 8, nil},
		{card.Services[0].Code, 2, []string{"header"}},
	}
	for _, tt := range tests {
		if got := fieldsOf(card.CheckGrid(tt.service, [][]int64{make([]int64, tt.zones)})); !slices.Equal(got, tt.fields) {
			t.Errorf("CheckGrid(%s, %d zones) fields = %q; want %q", tt.service, tt.zones, got, tt.fields)
		}
	}
}
