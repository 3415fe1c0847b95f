package shipping

import (
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
		got, ok := ZIP3Distance(ZIP3Number(tt.a), ZIP3Number(tt.b))
		if !ok || got < tt.min || got > tt.max {
			t.Errorf("ZIP3Distance(%s, %s) = %.0f, %v; want %.0f..%.0f", tt.a, tt.b, got, ok, tt.min, tt.max)
		}
		if back, _ := ZIP3Distance(ZIP3Number(tt.b), ZIP3Number(tt.a)); math.Abs(back-got) > 1e-9 {
			t.Errorf("ZIP3Distance is not symmetric for %s, %s", tt.a, tt.b)
		}
	}
	if _, ok := ZIP3Distance(ZIP3Number("000"), ZIP3Number("100")); ok {
		t.Errorf("ZIP3Distance(000, 100) ok; want unknown")
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

func address(zip, state string) *Address {
	return &Address{Name: "N", Street1: "1 Main St", City: "City", State: state, Zip: zip, Country: "US"}
}

func shipmentRequest(from, fromState, to, toState string) *ShipmentRequest {
	return &ShipmentRequest{Origin: address(from, fromState), Destination: address(to, toState),
		Parcel: &Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN", Weight: 8, WeightUnit: "OZ"}}
}

var testDay = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

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
