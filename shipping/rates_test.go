package shipping

import (
	"context"
	"errors"
	"flag"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

func TestZoneForDistance(t *testing.T) {
	tests := []struct {
		miles float64
		want  int
	}{
		{0, 1}, {50, 1}, {50.01, 2}, {150, 2}, {151, 3}, {300, 3}, {301, 4}, {600, 4}, {601, 5},
		{1000, 5}, {1001, 6}, {1400, 6}, {1401, 7}, {1800, 7}, {1800.5, 8}, {5000, 8},
	}
	for _, tt := range tests {
		if got := ZoneForDistance(tt.miles); got != tt.want {
			t.Errorf("ZoneForDistance(%v) = %d; want %d", tt.miles, got, tt.want)
		}
	}
}

func TestZip3Distance(t *testing.T) {
	tests := []struct {
		a, b     string
		min, max float64
	}{
		{"100", "100", 0, 0},
		{"100", "900", 2400, 2500}, // New York – Los Angeles
		{"100", "606", 690, 750},   // New York – Chicago
		{"941", "900", 330, 360},   // San Francisco – Los Angeles
		{"100", "071", 5, 20},      // New York – Newark
	}
	for _, tt := range tests {
		got, ok := zip3Distance(zip3Of(tt.a), zip3Of(tt.b))
		if !ok || got < tt.min || got > tt.max {
			t.Errorf("zip3Distance(%s, %s) = %.0f, %v; want %.0f..%.0f", tt.a, tt.b, got, ok, tt.min, tt.max)
		}
		if back, _ := zip3Distance(zip3Of(tt.b), zip3Of(tt.a)); math.Abs(back-got) > 1e-9 {
			t.Errorf("zip3Distance is not symmetric for %s, %s", tt.a, tt.b)
		}
	}
	if _, ok := zip3Distance(zip3Index("000"), zip3Of("100")); ok {
		t.Errorf("zip3Distance(000, 100) ok; want unknown")
	}
}

func TestZIPs(t *testing.T) {
	tests := []struct {
		zip, state     string
		known, inState bool
	}{
		{"10001", "NY", true, true},
		{"10001-1234", "NY", true, true},
		{"10001", "NJ", true, false},
		{"90058", "CA", true, true},
		{"00000", "NY", false, false},
		{"1000", "NY", false, false},
		{"10001-12", "NY", false, false},
		{"abcde", "NY", false, false},
		{"20500", "DC", true, true},
	}
	for _, tt := range tests {
		if got := KnownZIP(tt.zip); got != tt.known {
			t.Errorf("KnownZIP(%q) = %v; want %v", tt.zip, got, tt.known)
		}
		if got := ZIPInState(tt.zip, tt.state); got != tt.inState {
			t.Errorf("ZIPInState(%q, %q) = %v; want %v", tt.zip, tt.state, got, tt.inState)
		}
	}
}

func TestBillableWeightOz(t *testing.T) {
	tests := []struct {
		l, w, h, oz float64
		want        int64
	}{
		{1, 1, 1, 16, 16},          // actual weight wins
		{10, 10, 10, 16, 97},       // 1000/166 lb = 96.39 oz → 97
		{12, 12, 12, 200, 200},     // 166.6 oz dim < 200 actual
		{12, 12, 12, 100, 167},     // 1728/166×16 = 166.55 → 167
		{6, 4, 2, 3.2, 5},          // 48/166 lb = 4.63 oz → 5
		{83, 1, 2, 1, 16},          // exactly 1 lb dimensional: no extra ounce from float noise
		{0.1, 0.1, 0.1, 1e-300, 1}, // a feather is still billed an ounce, never 0
	}
	for _, tt := range tests {
		if got := BillableWeightOz(tt.l, tt.w, tt.h, tt.oz, DimFactor); got != tt.want {
			t.Errorf("BillableWeightOz(%v, %v, %v, %v) = %d; want %d", tt.l, tt.w, tt.h, tt.oz, got, tt.want)
		}
	}
}

func carrierByName(t testing.TB, name string) Carrier {
	t.Helper()
	for _, c := range SampleCarriers() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no sample carrier %s", name)
	return nil
}

func quoteFor(quotes []Quote, service string) (Quote, bool) {
	for _, q := range quotes {
		if q.Service == service {
			return q, true
		}
	}
	return Quote{}, false
}

func TestSampleCarriers(t *testing.T) {
	if n := len(SampleCarriers()); n < 4 {
		t.Fatalf("len(SampleCarriers()) = %d; want at least 4", n)
	}
	var services []string
	for _, c := range SampleCarriers() {
		quotes, err := c.Rates(context.Background(), RateRequest{ShipDate: "2026-11-23", LengthIn: 4, WidthIn: 4, HeightIn: 2, WeightOz: 8, Zone: 3})
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
		want []Surcharge
	}{
		{"", []Surcharge{{"FUEL", 131}}},
		{"DAS", []Surcharge{{"FUEL", 131}, {"DAS", 395}}},
		{"EDAS", []Surcharge{{"FUEL", 131}, {"EDAS", 495}}},
	}
	for _, tt := range tests {
		quotes, err := pc.Rates(context.Background(), RateRequest{ShipDate: "2026-11-23", LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: 4, Zone: 1, AreaSurcharge: tt.area, AreaSurchargeFromProfile: true})
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
		quotes, err := pc.Rates(context.Background(), RateRequest{ShipDate: "2026-11-23", LengthIn: 6, WidthIn: 4, HeightIn: 2, WeightOz: 4, Zone: tt.zone, TransitDays: tt.override})
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
			RateRequest{ShipDate: "2026-11-23", LengthIn: tt.l, WidthIn: tt.w, HeightIn: tt.h, WeightOz: tt.oz, Zone: 5})
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
				quotes, _ := c.Rates(context.Background(), RateRequest{ShipDate: "2026-11-23", LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: oz, Zone: zone})
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
				quotes, _ := c.Rates(context.Background(), RateRequest{ShipDate: "2026-11-23", LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: oz, Zone: zone})
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

func TestPickRates(t *testing.T) {
	r := func(carrier string, cents int64, days int) Rate {
		return Rate{Carrier: carrier, Service: "S", TotalCents: cents, EstimatedDeliveryDays: days}
	}
	rates := func() []Rate {
		return []Rate{r("A", 900, 5), r("B", 700, 4), r("C", 700, 3), r("D", 1500, 1), r("E", 1400, 1), r("F", 1400, 1)}
	}
	carriers := func(rs []Rate) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Carrier)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		strategy, want string
	}{
		{StrategyAll, "C,B,A,E,F,D"},
		{StrategyCheapest, "C"}, // 700 twice: fewer days wins
		{StrategyFastest, "E"},  // 1 day thrice: cheaper wins, then carrier name
	}
	for _, tt := range tests {
		if got := carriers(PickRates(rates(), tt.strategy)); got != tt.want {
			t.Errorf("PickRates(%s) = %s; want %s", tt.strategy, got, tt.want)
		}
	}
	if c, _ := Cheapest(rates()); c.Carrier != "C" {
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
		service := c.(*TableCarrier).versions[0].Card.Services[0].Code
		for i := range 3 {
			code, err := c.Purchase(context.Background(), PurchaseRequest{LabelID: "l", Service: service, ShipDate: "2026-11-23", Serials: serials})
			if err != nil {
				t.Fatalf("%s.Purchase: %v", c.Name(), err)
			}
			want := c.(*TableCarrier).versions[0].Card.Tracking.Number(service, int64(1+i))
			if code != want || seen[code] {
				t.Errorf("%s.Purchase #%d = %q; want %q, a new code", c.Name(), i, code, want)
			}
			seen[code] = true
			if err := c.Void(context.Background(), code); err != nil {
				t.Errorf("%s.Void(%s) = %v; want nil", c.Name(), code, err)
			}
		}
		if _, err := c.Purchase(context.Background(), PurchaseRequest{LabelID: "x", Service: "NOPE", ShipDate: "2026-11-23", Serials: serials}); err == nil {
			t.Errorf("%s.Purchase(service NOPE) succeeded", c.Name())
		}
	}
	if err := carrierByName(t, "PARCELCO").Void(context.Background(), "SS00000000000000018"); err == nil {
		t.Errorf("PARCELCO voided a SPEEDSHIP code")
	}
}

func address(zip, state string) *Address {
	return &Address{Name: "N", Street1: "1 Main St", City: "City", State: state, Zip: zip, Country: "US"}
}

func shipmentRequest(from, fromState, to, toState string) *ShipmentRequest {
	return &ShipmentRequest{Origin: address(from, fromState), Destination: address(to, toState),
		Parcel: &Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN", Weight: 8, WeightUnit: "OZ"}}
}

var testDay = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func TestShop(t *testing.T) {
	def := LoadProfile(DefaultProfileKey, DefaultProfile(), time.Time{})
	shopper := NewShopper(SampleCarriers()...)
	shop := func(p *Profile, sr *ShipmentRequest) ([]Rate, error) {
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
		wantWeight := WeightMetadata{ActualOzWeight: 8, BillableOzWeight: 8, DimFactor: 166, DimThreshold: 1728, Volume: 48}
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
		if r.Carrier == "PARCELCO" && !slices.ContainsFunc(r.RateMetadata.SurchargesMetadata, func(s SurchargeMetadata) bool { return s.SurchargeType == "DAS" }) {
			t.Errorf("PARCELCO %s to 99501 has no DAS surcharge: %v", r.Service, r.RateMetadata.SurchargesMetadata)
		}
	}

	narrow := LoadProfile("narrow", ProfileInput{Name: "n", Carriers: []string{"SPEEDSHIP", "REGIONALX"},
		ZipCoverage: map[string][]string{"SPEEDSHIP": {"100-149"}, "REGIONALX": {"100"}}}, time.Time{})
	_, err = shop(narrow, shipmentRequest("90058", "CA", "94103", "CA"))
	var re *RateError
	if !errors.As(err, &re) || re.Code != CodeZipNotServiced || len(re.Reasons) != 2 {
		t.Errorf("Shop(narrow, →941) = %v; want zip_not_serviced with 2 reasons", err)
	}

	heavy := shipmentRequest("10001", "NY", "10002", "NY")
	heavy.Parcel.Weight = 75
	heavy.Parcel.WeightUnit = "LB"
	_, err = shop(narrow, heavy)
	if !errors.As(err, &re) || re.Code != CodeNoRates || len(re.Reasons) != 2 {
		t.Errorf("Shop(narrow, 75 lb) = %v; want no_rates_available with 2 reasons", err)
	}

	// Routes abroad are TestShopInternational's; one inside another country gets no rate.
	inCanada := shipmentRequest("10001", "NY", "10002", "NY")
	inCanada.Origin = &Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ON", Zip: "M5V 2T6", Country: "CA"}
	inCanada.Destination = &Address{Name: "N", Street1: "1 Rue", City: "Montreal", State: "QC", Zip: "H3Z 2Y7", Country: "CA"}
	inCanada.ReturnAddress = nil
	_, err = shop(def, inCanada)
	if !errors.As(err, &re) || re.Code != CodeNoRates {
		t.Errorf("Shop(Toronto→Montreal) = %v; want no_rates_available", err)
	}

	cheapest := shipmentRequest("90058", "CA", "10001", "NY")
	cheapest.RateShoppingStrategy = StrategyCheapest
	if rates, err := shop(def, cheapest); err != nil || len(rates) != 1 {
		t.Errorf("Shop(CHEAPEST) = %v, %v; want one rate", rates, err)
	}
}

// TestShopLeftOut: a successful quote says why each carrier of the profile that gave no rate
// gave none, and each service a carrier left out while quoting others, with the same reasons
// a rate error carries; an empty list when every one quoted, whatever the strategy picks.
func TestShopLeftOut(t *testing.T) {
	def := LoadProfile(DefaultProfileKey, DefaultProfile(), time.Time{})
	withGone := LoadProfile("gone", ProfileInput{Name: "g", Carriers: []string{"POSTLINE", "GONE"}}, time.Time{})
	shopper := NewShopper(SampleCarriers()...)
	parcel := func(l, w, h, oz float64) *Parcel {
		return &Parcel{Length: l, Width: w, Height: h, LengthUnit: "IN", Weight: oz, WeightUnit: "OZ"}
	}
	tests := []struct {
		name     string
		p        *Profile
		to, st   string
		parcel   *Parcel
		strategy string
		want     []Reason
	}{
		{"every carrier quotes", def, "10001", "NY", parcel(6, 4, 2, 8), StrategyAll, []Reason{}},
		{"every carrier quotes, cheapest picked", def, "10001", "NY", parcel(6, 4, 2, 8), StrategyCheapest, []Reason{}},
		{"a service's weight limit", def, "10001", "NY", parcel(10, 8, 4, 20), StrategyAll,
			[]Reason{{Carrier: "REGIONALX", Service: "REGSL", Message: "parcel weighs more than 1 lb"}}},
		{"a service's last weight break", def, "10001", "NY", parcel(12, 10, 8, 10), StrategyFastest,
			[]Reason{{Carrier: "REGIONALX", Service: "REGSL", Message: "billable weight 93 oz is above the service's last weight break, 16 oz"}}},
		{"coverage", def, "96813", "HI", parcel(6, 4, 2, 8), StrategyAll, []Reason{
			{Carrier: "SPEEDSHIP", Message: "does not deliver to ZIP3 968 under profile default"},
			{Carrier: "REGIONALX", Message: "does not deliver to ZIP3 968 under profile default"}}},
		{"a carrier's weight and length limits", def, "10001", "NY", parcel(40, 10, 10, 960), StrategyCheapest, []Reason{
			{Carrier: "SPEEDSHIP", Message: "parcel weighs more than 50 lb"},
			{Carrier: "REGIONALX", Message: "parcel is longer than 36 in"}}},
		{"a carrier no longer available", withGone, "10001", "NY", parcel(6, 4, 2, 8), StrategyAll,
			[]Reason{{Carrier: "GONE", Message: "carrier is not available"}}},
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

func TestNewProfile(t *testing.T) {
	known := []string{"POSTLINE", "PARCELCO", "SPEEDSHIP", "REGIONALX"}
	good := DefaultProfile()
	if _, err := NewProfile("default", good, known, time.Time{}); err != nil {
		t.Fatalf("NewProfile(default) = %v", err)
	}
	tests := []struct {
		name   string
		key    string
		edit   func(*ProfileInput)
		fields []string
	}{
		{"bad key", "Bad Key", func(*ProfileInput) {}, []string{"profile_key"}},
		{"no name", "k", func(p *ProfileInput) { p.Name = " " }, []string{"name"}},
		{"no carriers", "k", func(p *ProfileInput) { p.Carriers = nil; p.ZipCoverage = nil; p.ZipSurcharges = nil }, []string{"carriers"}},
		{"unknown carrier", "k", func(p *ProfileInput) { p.Carriers = append(p.Carriers, "ACME") }, []string{"carriers.4"}},
		{"duplicate carrier", "k", func(p *ProfileInput) { p.Carriers = append(p.Carriers, "POSTLINE") }, []string{"carriers.4"}},
		{"bad sort center", "k", func(p *ProfileInput) { p.SortCenters = []SortCenter{{ID: "", Name: "x", Zip: "00000"}} },
			[]string{"sort_centers.0.id", "sort_centers.0.zip"}},
		{"bad coverage", "k", func(p *ProfileInput) {
			p.ZipCoverage = map[string][]string{"POSTLINE": {"900-800", "9000", "abc"}, "ACME": {"900"}}
		}, []string{"zip_coverage.ACME", "zip_coverage.POSTLINE.0", "zip_coverage.POSTLINE.1", "zip_coverage.POSTLINE.2"}},
		{"bad surcharge", "k", func(p *ProfileInput) {
			p.ZipSurcharges = map[string]map[string]string{"PARCELCO": {"10001": "XAS", "1000": "DAS"}}
		}, []string{"zip_surcharges.PARCELCO.1000", "zip_surcharges.PARCELCO.10001"}},
		{"bad mapping", "k", func(p *ProfileInput) {
			p.ZoneTNTMapping = []ZoneTNT{{OriginZip3: "000", DestZip3: "100", Zone: 9, TransitDays: 0},
				{OriginZip3: "100", DestZip3: "100", Zone: 1, TransitDays: 1}, {OriginZip3: "100", DestZip3: "100", Zone: 1, TransitDays: 1}}
		}, []string{"zone_tnt_mapping.0.origin_zip3", "zone_tnt_mapping.0.zone", "zone_tnt_mapping.0.transit_days", "zone_tnt_mapping.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := DefaultProfile()
			tt.edit(&in)
			_, err := NewProfile(tt.key, in, known, time.Time{})
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("NewProfile = %v; want a ValidationError", err)
			}
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Field)
			}
			if !slices.Equal(got, tt.fields) {
				t.Errorf("NewProfile fields = %v; want %v", got, tt.fields)
			}
		})
	}
}

func TestValidateShipmentRequest(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*ShipmentRequest)
		fields []string
	}{
		{"ok", func(*ShipmentRequest) {}, nil},
		{"ok metric", func(r *ShipmentRequest) {
			r.Parcel = &Parcel{Length: 30, Width: 20, Height: 10, LengthUnit: "CM", Weight: 2, WeightUnit: "KG"}
		}, nil},
		{"missing everything", func(r *ShipmentRequest) { *r = ShipmentRequest{} }, []string{"origin", "destination", "parcel"}},
		{"empty address", func(r *ShipmentRequest) { r.Destination = &Address{} },
			[]string{"destination.name", "destination.street1", "destination.city", "destination.state", "destination.zip", "destination.country"}},
		{"unknown zip", func(r *ShipmentRequest) { r.Destination.Zip = "00001" }, []string{"destination.zip"}},
		{"bad zip", func(r *ShipmentRequest) { r.Destination.Zip = "1000x" }, []string{"destination.zip"}},
		{"wrong state", func(r *ShipmentRequest) { r.Destination.State = "CA" }, []string{"destination.zip"}},
		{"bad country", func(r *ShipmentRequest) { r.Origin.Country = "USA" }, []string{"origin.country"}},
		{"bad US state", func(r *ShipmentRequest) { r.Destination.State = "NYC" }, []string{"destination.state"}},
		// Outside the US, addresses follow their country's table; a shipment
		// abroad needs a customs declaration.
		{"foreign state", func(r *ShipmentRequest) {
			r.Destination.Country, r.Destination.State, r.Destination.Zip = "AU", "NSW", "2000"
		}, []string{"customs_info"}},
		{"foreign state long", func(r *ShipmentRequest) {
			r.Destination.Country, r.Destination.State, r.Destination.Zip = "CA", strings.Repeat("x", 256), "M5V 2T6"
		}, []string{"destination.state", "customs_info"}},
		{"to Toronto", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "on", Zip: "m5v2t6", Country: "CA"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, nil},
		{"to London without a state", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "10 Downing St", City: "London", Zip: "SW1A 2AA", Country: "GB"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, nil},
		{"to Hong Kong without a postal code", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Queen's Rd", City: "Hong Kong", State: "Kowloon", Country: "HK"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, nil},
		{"unknown country", func(r *ShipmentRequest) { r.Destination.Country = "XK" }, []string{"destination.country"}},
		{"malformed postal code", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ON", Zip: "12345", Country: "CA"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, []string{"destination.zip"}},
		{"missing province", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", Zip: "M5V 2T6", Country: "CA"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, []string{"destination.state"}},
		{"unknown province", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ZZ", Zip: "M5V 2T6", Country: "CA"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, []string{"destination.state"}},
		{"postal code of another province", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ON", Zip: "V6B 1A1", Country: "CA"}
			r.CustomsInfo = customsInfo()
			r.CustomsInfo.Incoterm = nil
		}, []string{"destination.zip"}},
		{"no declaration abroad", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ON", Zip: "M5V 2T6", Country: "CA"}
		}, []string{"customs_info"}},
		{"domestic declaration keeps the wider incoterms", func(r *ShipmentRequest) {
			r.CustomsInfo = customsInfo()
			term := "EXW"
			r.CustomsInfo.Incoterm = &term
		}, nil},
		{"international declaration takes DAP or DDP", func(r *ShipmentRequest) {
			*r.Destination = Address{Name: "N", Street1: "1 Front St", City: "Toronto", State: "ON", Zip: "M5V 2T6", Country: "CA"}
			r.CustomsInfo = customsInfo()
			term := "EXW"
			r.CustomsInfo.Incoterm = &term
		}, []string{"customs_info.incoterm"}},
		{"bad email", func(r *ShipmentRequest) { r.Origin.Email = "nope" }, []string{"origin.email"}},
		{"bad units", func(r *ShipmentRequest) { r.Parcel.LengthUnit, r.Parcel.WeightUnit = "FT", "TON" },
			[]string{"parcel.length_unit", "parcel.weight_unit"}},
		{"zero sizes", func(r *ShipmentRequest) { r.Parcel.Length, r.Parcel.Weight = 0, -1 }, []string{"parcel.length", "parcel.weight"}},
		{"too heavy", func(r *ShipmentRequest) { r.Parcel.Weight, r.Parcel.WeightUnit = 150.01, "LB" }, []string{"parcel.weight"}},
		{"150 lb is fine", func(r *ShipmentRequest) { r.Parcel.Weight, r.Parcel.WeightUnit = 150, "LB" }, nil},
		{"150 lb in kg", func(r *ShipmentRequest) { r.Parcel.Weight, r.Parcel.WeightUnit = 68.0388555, "KG" }, nil},
		{"150 lb in g", func(r *ShipmentRequest) { r.Parcel.Weight, r.Parcel.WeightUnit = 68038.8555, "G" }, nil},
		{"a hair over 150 lb in g", func(r *ShipmentRequest) { r.Parcel.Weight, r.Parcel.WeightUnit = 68038.86, "G" }, []string{"parcel.weight"}},
		{"108 in in cm", func(r *ShipmentRequest) { r.Parcel.Length, r.Parcel.LengthUnit = 274.32, "CM" }, nil},
		{"too small to convert", func(r *ShipmentRequest) {
			r.Parcel.Length, r.Parcel.LengthUnit, r.Parcel.Weight, r.Parcel.WeightUnit = 5e-324, "CM", 5e-324, "G"
		}, []string{"parcel.length", "parcel.weight"}},
		{"too long", func(r *ShipmentRequest) { r.Parcel.Height = 109 }, []string{"parcel.height"}},
		{"too long metric", func(r *ShipmentRequest) { r.Parcel.Length, r.Parcel.LengthUnit = 275, "CM" }, []string{"parcel.length"}},
		{"past date", func(r *ShipmentRequest) { r.ShipDate = "2026-11-22" }, []string{"ship_date"}},
		{"bad date", func(r *ShipmentRequest) { r.ShipDate = "2026-13-01" }, []string{"ship_date"}},
		{"today", func(r *ShipmentRequest) { r.ShipDate = "2026-11-23" }, nil},
		{"bad enums", func(r *ShipmentRequest) { r.RateShoppingStrategy, r.LabelFormat = "BEST", "GIF" },
			[]string{"rate_shopping_strategy", "label_format"}},
		{"long reference", func(r *ShipmentRequest) { s := strings.Repeat("x", 256); r.CustomReference1 = &s }, []string{"custom_reference_1"}},
		{"brand with a comma", func(r *ShipmentRequest) { s := "a,b"; r.Brand = &s }, []string{"brand"}},
		{"control characters", func(r *ShipmentRequest) { r.Origin.Name = "a\x00b" }, []string{"origin.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := shipmentRequest("90058", "CA", "10001", "NY")
			tt.edit(r)
			_, err := r.Validate(testDay)
			var got []string
			var ve *ValidationError
			if errors.As(err, &ve) {
				for _, f := range ve.Fields {
					got = append(got, f.Field)
				}
			} else if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if !slices.Equal(got, tt.fields) {
				t.Errorf("Validate fields = %v; want %v", got, tt.fields)
			}
		})
	}
	r := shipmentRequest("90058", "ca", "10001", "NY")
	r.Origin.Country = "us"
	brand := " Acme "
	r.Brand = &brand
	if _, err := r.Validate(testDay); err != nil || *r.Brand != "Acme" || r.ReturnAddress == nil || r.ReturnAddress.Zip != "90058" ||
		r.ShipDate != "2026-11-23" || r.RateShoppingProfile != DefaultProfileKey || r.RateShoppingStrategy != StrategyAll || r.LabelFormat != "PDF" {
		t.Errorf("Validate defaults: %+v, %v", r, err)
	}
}

// BenchmarkQuote quotes one parcel across every built-in carrier under the default profile.
func BenchmarkQuote(b *testing.B) {
	p := LoadProfile(DefaultProfileKey, DefaultProfile(), time.Time{})
	shopper := NewShopper(SampleCarriers()...)
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
