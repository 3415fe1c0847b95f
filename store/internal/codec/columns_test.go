package codec

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/waybill/waybill/shipping"
)

const (
	metaOneSurcharge = `{"usps_zone":8,"billable_weight":31,"weight_metadata":{"actual_oz_weight":20,"billable_oz_weight":31,` +
		`"dim_factor":166,"dim_threshold":1728,"volume":320},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0.19,"currency":"USD"}}]}`
	metaNoSurcharge = `{"usps_zone":3,"billable_weight":4,"weight_metadata":{"actual_oz_weight":3.53,"billable_oz_weight":4,` +
		`"dim_factor":166,"dim_threshold":1728,"volume":12.5},"surcharges_metadata":[]}`
)

func TestDecodeRateMetadata(t *testing.T) {
	for _, s := range []string{
		metaOneSurcharge,
		metaNoSurcharge,
		`{"usps_zone":1,"billable_weight":2400,"weight_metadata":{"actual_oz_weight":2400,"billable_oz_weight":2400,"dim_factor":166,"dim_threshold":1728,"volume":1e4},` +
			`"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":12.5,"currency":"USD"}},{"surcharge_type":"EDAS","surcharge":{"amount":4.95,"currency":"USD"}}]}`,
		`{"usps_zone":3, "billable_weight":4,"weight_metadata":{},"surcharges_metadata":[]}`, // spacing: slow path
		`{"billable_weight":4,"usps_zone":3,"surcharges_metadata":null}`,                     // other order: slow path
		`{"usps_zone":3,"billable_weight":4,"weight_metadata":{"actual_oz_weight":4,"billable_oz_weight":4,"dim_factor":166,"dim_threshold":1728,"volume":1},` +
			`"surcharges_metadata":[{"surcharge_type":"A\"B","surcharge":{"amount":1,"currency":"USD"}}]}`, // escapes: slow path
	} {
		var got, want shipping.RateMetadata
		if err := DecodeRateMetadata(s, &got); err != nil {
			t.Fatalf("DecodeRateMetadata(%q) = %v", s, err)
		}
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		if want.SurchargesMetadata == nil {
			want.SurchargesMetadata = got.SurchargesMetadata // null and [] are both no surcharges
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeRateMetadata(%q) = %+v; want %+v", s, got, want)
		}
	}
	for _, s := range []string{``, `{`, `{"usps_zone":x,"billable_weight":4,"surcharges_metadata":[]}`, `[]`} {
		var m shipping.RateMetadata
		if err := DecodeRateMetadata(s, &m); err == nil {
			t.Errorf("DecodeRateMetadata(%q) = %+v, nil; want an error", s, m)
		}
	}
}

// TestDecodeRateMetadataFastPath: what encoding/json writes is read by the hand-written parser.
func TestDecodeRateMetadataFastPath(t *testing.T) {
	m := shipping.RateMetadata{USPSZone: 5, BillableWeight: 31,
		WeightMetadata: shipping.WeightMetadata{ActualOzWeight: 20.25, BillableOzWeight: 31, DimFactor: 166, DimThreshold: 1728, Volume: 320.5},
		SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(19)},
			{SurchargeType: "DAS", Surcharge: shipping.USD(395)}}, CarrierVersion: 3}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got shipping.RateMetadata
	if !FastRateMetadata(string(b), &got) || !reflect.DeepEqual(got, m) {
		t.Errorf("FastRateMetadata(%s) = %+v; want the fast path to read %+v", b, got, m)
	}
}

func FuzzDecodeRateMetadata(f *testing.F) {
	f.Add(metaOneSurcharge)
	f.Add(metaNoSurcharge)
	f.Fuzz(func(t *testing.T, s string) {
		var fast shipping.RateMetadata
		if !FastRateMetadata(s, &fast) {
			return
		}
		// Whatever the fast path accepts, encoding/json must read the same.
		var want shipping.RateMetadata
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("fast path accepted %q, which is not JSON: %v", s, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("FastRateMetadata(%q) = %+v; encoding/json reads %+v", s, fast, want)
		}
	})
}

// BenchmarkDecodeRateMetadata compares the hand-written parser with encoding/json on what
// encoding/json writes.
func BenchmarkDecodeRateMetadata(b *testing.B) {
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var m shipping.RateMetadata
		for b.Loop() {
			if err := DecodeRateMetadata(metaOneSurcharge, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		var m shipping.RateMetadata
		for b.Loop() {
			if err := json.Unmarshal([]byte(metaOneSurcharge), &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A quote's surcharges are stored as cents by type and read back as they were, in order, by
// hand in the common shape and by encoding/json otherwise; amounts that are not whole cents of
// the quote's currency are refused rather than stored otherwise.
func TestSurchargesColumn(t *testing.T) {
	usd := func(typ string, cents int64) shipping.SurchargeMetadata {
		return shipping.SurchargeMetadata{SurchargeType: typ, Surcharge: shipping.USD(cents)}
	}
	tests := []struct {
		name   string
		in     []shipping.SurchargeMetadata
		stored string
	}{
		{"none", []shipping.SurchargeMetadata{}, `{}`},
		{"fuel", []shipping.SurchargeMetadata{usd("FUEL", 19)}, `{"FUEL":19}`},
		{"in order", []shipping.SurchargeMetadata{usd("FUEL", 19), usd("DAS", 300), usd("EDAS", -5)}, `{"FUEL":19,"DAS":300,"EDAS":-5}`},
		{"escaped", []shipping.SurchargeMetadata{usd(`A"B`, 1), usd("é", 2)}, `{"A\"B":1,"é":2}`},
		{"twice", []shipping.SurchargeMetadata{usd("FUEL", 1), usd("FUEL", 2)}, `{"FUEL":1,"FUEL":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeSurcharges(tt.in, "USD")
			if err != nil || got != tt.stored {
				t.Fatalf("EncodeSurcharges(%v) = %q, %v; want %q", tt.in, got, err, tt.stored)
			}
			back, err := DecodeSurcharges(got, "USD")
			if err != nil || !reflect.DeepEqual(back, tt.in) {
				t.Errorf("DecodeSurcharges(%q) = %v, %v; want %v", got, back, err, tt.in)
			}
		})
	}
	for _, bad := range [][]shipping.SurchargeMetadata{
		{{SurchargeType: "FUEL", Surcharge: shipping.Money{Amount: 0.195, Currency: "USD"}}},
		{{SurchargeType: "FUEL", Surcharge: shipping.Money{Amount: 0.19, Currency: "EUR"}}},
	} {
		if got, err := EncodeSurcharges(bad, "USD"); err == nil {
			t.Errorf("EncodeSurcharges(%v) = %q; want an error", bad, got)
		}
	}
	for _, bad := range []string{``, `[]`, `{"FUEL":1.5}`, `{"FUEL":"1"}`, `{"FUEL":1}x`, `{"FUEL":1`} {
		if got, err := DecodeSurcharges(bad, "USD"); err == nil {
			t.Errorf("DecodeSurcharges(%q) = %v; want an error", bad, got)
		}
	}
}
