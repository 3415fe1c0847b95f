package rating

import (
	"context"
	"errors"
	"flag"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

func TestPickRates(t *testing.T) {
	r := func(carrier string, cents int64, days int) shipping.Rate {
		return shipping.Rate{Carrier: carrier, Service: "S", TotalCents: cents, EstimatedDeliveryDays: days}
	}
	rates := func() []shipping.Rate {
		return []shipping.Rate{r("A", 900, 5), r("B", 700, 4), r("C", 700, 3), r("D", 1500, 1), r("E", 1400, 1), r("F", 1400, 1)}
	}
	carriers := func(rs []shipping.Rate) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Carrier)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		strategy, want string
	}{
		{shipping.StrategyAll, "C,B,A,E,F,D"},
		{shipping.StrategyCheapest, "C"}, // 700 twice: fewer days wins
		{shipping.StrategyFastest, "E"},  // 1 day thrice: cheaper wins, then carrier name
	}
	for _, tt := range tests {
		if got := carriers(PickRates(rates(), tt.strategy)); got != tt.want {
			t.Errorf("PickRates(%s) = %s; want %s", tt.strategy, got, tt.want)
		}
	}
	if c, _ := shipping.Cheapest(rates()); c.Carrier != "C" {
		t.Errorf("Cheapest() = %s; want C", c.Carrier)
	}
}

func TestAddBusinessDays(t *testing.T) {
	tests := []struct {
		from string
		n    int
		want string
	}{
		{"2026-11-23", 1, "2026-11-24"}, // Monday → Tuesday
		{"2026-11-27", 1, "2026-11-30"}, // Friday → Monday
		{"2026-11-28", 1, "2026-11-30"}, // Saturday → Monday
		{"2026-11-22", 5, "2026-11-30"}, // Sunday → Monday: Thanksgiving (Thursday 26th) is no business day
		{"2026-11-23", 10, "2026-12-08"},
		{"2026-11-23", 0, "2026-11-23"},
		{"2026-11-25", 1, "2026-11-27"}, // Wednesday → Friday over Thanksgiving
		{"2026-11-26", 1, "2026-11-27"}, // handed over on the holiday: counting starts the day after
		{"2026-07-02", 1, "2026-07-06"}, // Thursday → Monday: July 4th, a Saturday, is observed Friday 3rd
		{"2027-12-23", 1, "2027-12-27"}, // Christmas 2027 (Saturday) observed Friday 24th
		{"2027-12-30", 1, "2028-01-03"}, // New Year's Day 2028 (Saturday) observed Friday 2027-12-31
		{"2023-01-13", 1, "2023-01-17"}, // Friday → Tuesday: Martin Luther King, Jr. Day
		{"2022-06-17", 1, "2022-06-21"}, // Juneteenth 2022 (Sunday) observed Monday 20th
		{"2020-06-18", 1, "2020-06-19"}, // no Juneteenth before 2021
	}
	for _, tt := range tests {
		from, _ := time.Parse(time.DateOnly, tt.from)
		if got := AddBusinessDays(from, tt.n).Format(time.DateOnly); got != tt.want {
			t.Errorf("AddBusinessDays(%s, %d) = %s; want %s", tt.from, tt.n, got, tt.want)
		}
	}
}

func address(zip, state string) *shipping.Address {
	return &shipping.Address{Name: "N", Street1: "1 Main St", City: "City", State: state, Zip: zip, Country: "US"}
}

func shipmentRequest(from, fromState, to, toState string) *shipping.ShipmentRequest {
	return &shipping.ShipmentRequest{Origin: address(from, fromState), Destination: address(to, toState),
		Parcel: &shipping.Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN", Weight: 8, WeightUnit: "OZ"}}
}

var testDay = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func TestShop(t *testing.T) {
	def := LoadProfile(shipping.DefaultProfileKey, DefaultProfile(), time.Time{})
	shopper := NewShopper(carrier.SampleCarriers()...)
	shop := func(p *Profile, sr *shipping.ShipmentRequest) ([]shipping.Rate, error) {
		t.Helper()
		day, err := sr.Validate(testDay)
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		rates, _, err := shopper.Shop(context.Background(), p, sr, day)
		return rates, err
	}

	rates, err := shop(def, shipmentRequest("90058", "CA", "10001", "NY"))
	if err != nil || len(rates) < 8 {
		t.Fatalf("Shop(LA→NY) = %d rates, %v; want all carriers", len(rates), err)
	}
	for _, r := range rates {
		if r.RateMetadata.USPSZone != 8 {
			t.Errorf("%s %s zone %d; want 8 (the profile's mapping)", r.Carrier, r.Service, r.RateMetadata.USPSZone)
		}
		// 6×4×2 in, 8 oz: 48 in³ weigh 48/166 lb = 4.6 oz dimensionally, so 8 oz are billed.
		wantWeight := shipping.WeightMetadata{ActualOzWeight: 8, BillableOzWeight: 8, DimFactor: 166, DimThreshold: 1728, Volume: 48}
		if m := r.RateMetadata; m.BillableWeight != 8 || m.WeightMetadata != wantWeight {
			t.Errorf("%s %s billable_weight %d, weight_metadata %+v; want 8, %+v", r.Carrier, r.Service, m.BillableWeight, m.WeightMetadata, wantWeight)
		}
		var sum float64
		for _, s := range r.RateMetadata.SurchargesMetadata {
			if s.Surcharge.Currency != "USD" || s.SurchargeType == "" {
				t.Errorf("%s %s surcharge %+v; want a type and USD", r.Carrier, r.Service, s)
			}
			sum += s.Surcharge.Amount
		}
		if math.Round(sum*100) != float64(r.SurchargesCents) {
			t.Errorf("%s %s surcharges_metadata sum to $%.2f; want %d cents", r.Carrier, r.Service, sum, r.SurchargesCents)
		}
	}

	// Anchorage: SPEEDSHIP and REGIONALX do not deliver there; PARCELCO adds DAS for 99501.
	rates, err = shop(def, shipmentRequest("90058", "CA", "99501", "AK"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rates {
		if r.Carrier == "SPEEDSHIP" || r.Carrier == "REGIONALX" {
			t.Errorf("rate from %s to Anchorage; its coverage excludes 995", r.Carrier)
		}
		if r.Carrier == "PARCELCO" && !slices.ContainsFunc(r.RateMetadata.SurchargesMetadata, func(s shipping.SurchargeMetadata) bool { return s.SurchargeType == "DAS" }) {
			t.Errorf("PARCELCO %s to 99501 has no DAS surcharge: %v", r.Service, r.RateMetadata.SurchargesMetadata)
		}
	}

	narrow := LoadProfile("narrow", ProfileInput{Name: "n", Carriers: []string{"SPEEDSHIP", "REGIONALX"},
		ZipCoverage: map[string][]string{"SPEEDSHIP": {"100-149"}, "REGIONALX": {"100"}}}, time.Time{})
	_, err = shop(narrow, shipmentRequest("90058", "CA", "94103", "CA"))
	var re *shipping.RateError
	if !errors.As(err, &re) || re.Code != shipping.CodeZipNotServiced || len(re.Reasons) != 2 {
		t.Errorf("Shop(narrow, →941) = %v; want zip_not_serviced with 2 reasons", err)
	}

	heavy := shipmentRequest("10001", "NY", "10002", "NY")
	heavy.Parcel.Weight = 75
	heavy.Parcel.WeightUnit = "LB"
	_, err = shop(narrow, heavy)
	if !errors.As(err, &re) || re.Code != shipping.CodeNoRates || len(re.Reasons) != 2 {
		t.Errorf("Shop(narrow, 75 lb) = %v; want no_rates_available with 2 reasons", err)
	}

	// Routes abroad are TestShopInternational's; one inside another country gets no rate.
	inCanada := shipmentRequest("10001", "NY", "10002", "NY")
	inCanada.Origin = &shipping.Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ON", Zip: "M5V 2T6", Country: "CA"}
	inCanada.Destination = &shipping.Address{Name: "N", Street1: "1 Rue", City: "Montreal", State: "QC", Zip: "H3Z 2Y7", Country: "CA"}
	inCanada.ReturnAddress = nil
	_, err = shop(def, inCanada)
	if !errors.As(err, &re) || re.Code != shipping.CodeNoRates {
		t.Errorf("Shop(Toronto→Montreal) = %v; want no_rates_available", err)
	}

	cheapest := shipmentRequest("90058", "CA", "10001", "NY")
	cheapest.RateShoppingStrategy = shipping.StrategyCheapest
	if rates, err := shop(def, cheapest); err != nil || len(rates) != 1 {
		t.Errorf("Shop(CHEAPEST) = %v, %v; want one rate", rates, err)
	}
}

// TestShopLeftOut: a successful quote says why each carrier of the profile that gave no rate
// gave none, and each service a carrier left out while quoting others, with the same reasons
// a rate error carries; an empty list when every one quoted, whatever the strategy picks.
func TestShopLeftOut(t *testing.T) {
	def := LoadProfile(shipping.DefaultProfileKey, DefaultProfile(), time.Time{})
	withGone := LoadProfile("gone", ProfileInput{Name: "g", Carriers: []string{"POSTLINE", "GONE"}}, time.Time{})
	shopper := NewShopper(carrier.SampleCarriers()...)
	parcel := func(l, w, h, oz float64) *shipping.Parcel {
		return &shipping.Parcel{Length: l, Width: w, Height: h, LengthUnit: "IN", Weight: oz, WeightUnit: "OZ"}
	}
	tests := []struct {
		name     string
		p        *Profile
		to, st   string
		parcel   *shipping.Parcel
		strategy string
		want     []shipping.Reason
	}{
		{"every carrier quotes", def, "10001", "NY", parcel(6, 4, 2, 8), shipping.StrategyAll, []shipping.Reason{}},
		{"every carrier quotes, cheapest picked", def, "10001", "NY", parcel(6, 4, 2, 8), shipping.StrategyCheapest, []shipping.Reason{}},
		{"a service's weight limit", def, "10001", "NY", parcel(10, 8, 4, 20), shipping.StrategyAll,
			[]shipping.Reason{{Carrier: "REGIONALX", Service: "REGSL", Message: "parcel weighs more than 1 lb"}}},
		{"a service's last weight break", def, "10001", "NY", parcel(12, 10, 8, 10), shipping.StrategyFastest,
			[]shipping.Reason{{Carrier: "REGIONALX", Service: "REGSL", Message: "billable weight 93 oz is above the service's last weight break, 16 oz"}}},
		{"coverage", def, "96813", "HI", parcel(6, 4, 2, 8), shipping.StrategyAll, []shipping.Reason{
			{Carrier: "SPEEDSHIP", Message: "does not deliver to ZIP3 968 under profile default"},
			{Carrier: "REGIONALX", Message: "does not deliver to ZIP3 968 under profile default"}}},
		{"a carrier's weight and length limits", def, "10001", "NY", parcel(40, 10, 10, 960), shipping.StrategyCheapest, []shipping.Reason{
			{Carrier: "SPEEDSHIP", Message: "parcel weighs more than 50 lb"},
			{Carrier: "REGIONALX", Message: "parcel is longer than 36 in"}}},
		{"a carrier no longer available", withGone, "10001", "NY", parcel(6, 4, 2, 8), shipping.StrategyAll,
			[]shipping.Reason{{Carrier: "GONE", Message: "carrier is not available"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sr := shipmentRequest("90058", "CA", tt.to, tt.st)
			sr.Parcel, sr.RateShoppingStrategy = tt.parcel, tt.strategy
			day, err := sr.Validate(testDay)
			if err != nil {
				t.Fatal(err)
			}
			rates, leftOut, err := shopper.Shop(context.Background(), tt.p, sr, day)
			if err != nil || len(rates) == 0 {
				t.Fatalf("Shop = %d rates, %v; want rates", len(rates), err)
			}
			if leftOut == nil || !slices.Equal(leftOut, tt.want) {
				t.Errorf("Shop left out %#v; want %#v", leftOut, tt.want)
			}
		})
	}
}

func TestProfileZone(t *testing.T) {
	p := LoadProfile("p", ProfileInput{Name: "p", Carriers: []string{"PARCELCO"},
		SortCenters:    []SortCenter{{ID: "EWR1", Name: "Newark", Zip: "07114"}, {ID: "LAX1", Name: "LA", Zip: "90058"}},
		ZoneTNTMapping: []ZoneTNT{{OriginZip3: "071", DestZip3: "606", Zone: 3, TransitDays: 2}}}, time.Time{})
	tests := []struct {
		origin, dest string
		zone, days   int
	}{
		{"100", "606", 3, 2}, // New York is served by the Newark sort center; the mapping has the route
		{"071", "606", 3, 2},
		{"606", "100", 5, 0}, // Chicago has no sort center within 150 mi: distance ~720 mi
		{"100", "100", 1, 0}, // from Newark, ~10 mi
		{"941", "100", 8, 0}, // San Francisco is 340 mi from LA: zone from SF itself
		{"917", "100", 8, 0},
	}
	for _, tt := range tests {
		zone, days, mapped, ok := p.Zone(zip3Of(tt.origin), zip3Of(tt.dest))
		if !ok || zone != tt.zone || days != tt.days || mapped != (days > 0) {
			t.Errorf("Zone(%s, %s) = %d, %d, %v; want %d, %d", tt.origin, tt.dest, zone, days, ok, tt.zone, tt.days)
		}
	}
	if got := p.ZoneOrigin(zip3Of("941")); got != zip3Of("941") {
		t.Errorf("ZoneOrigin(941) = %03d; want 941 (no sort center near)", got)
	}
	if got := p.ZoneOrigin(zip3Of("917")); got != zip3Of("900") {
		t.Errorf("ZoneOrigin(917) = %03d; want 900 (LAX1)", got)
	}
}

// BenchmarkQuote quotes one parcel across every built-in carrier under the default profile.
func BenchmarkQuote(b *testing.B) {
	p := LoadProfile(shipping.DefaultProfileKey, DefaultProfile(), time.Time{})
	shopper := NewShopper(carrier.SampleCarriers()...)
	sr := shipmentRequest("90058", "CA", "98101", "WA")
	day, err := sr.Validate(testDay)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rates, _, err := shopper.Shop(ctx, p, sr, day)
		if err != nil || len(rates) == 0 {
			b.Fatal(err)
		}
	}
}

// TestReturnQuotedAsReversedRoute checks that a return is priced exactly as a shipment sent
// from its destination to its origin: same zone, surcharges and prices.
func TestReturnQuotedAsReversedRoute(t *testing.T) {
	shopper := NewShopper(carrier.SampleCarriers()...)
	p := LoadProfile(shipping.DefaultProfileKey, DefaultProfile(), time.Time{})
	la := shipping.Address{Name: "Acme Warehouse", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	ny := shipping.Address{Name: "Jane Doe", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"}
	parcel := shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 20, WeightUnit: "OZ"}
	quote := func(r shipping.ShipmentRequest) []shipping.Rate {
		t.Helper()
		day, err := r.Validate(time.Date(2026, 11, 22, 3, 42, 3, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		rates, _, err := shopper.Shop(t.Context(), p, r.Routed(), day)
		if err != nil {
			t.Fatal(err)
		}
		return rates
	}
	ret := quote(shipping.ShipmentRequest{Origin: &la, Destination: &ny, Parcel: &parcel, IsReturn: true})
	reversed := quote(shipping.ShipmentRequest{Origin: &ny, Destination: &la, Parcel: &parcel})
	if len(ret) != len(reversed) {
		t.Fatalf("return: %d rates; the reversed shipment: %d", len(ret), len(reversed))
	}
	for i := range ret {
		a, b := ret[i], reversed[i]
		if a.Carrier != b.Carrier || a.Service != b.Service || a.TotalCents != b.TotalCents || a.RateMetadata.USPSZone != b.RateMetadata.USPSZone {
			t.Errorf("rate %d: return %s %s %d¢ zone %d; reversed %s %s %d¢ zone %d", i, a.Carrier, a.Service, a.TotalCents,
				a.RateMetadata.USPSZone, b.Carrier, b.Service, b.TotalCents, b.RateMetadata.USPSZone)
		}
	}
}
