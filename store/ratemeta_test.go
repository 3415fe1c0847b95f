package store

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
		if err := decodeRateMetadata(s, &got); err != nil {
			t.Fatalf("decodeRateMetadata(%q) = %v", s, err)
		}
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		if want.SurchargesMetadata == nil {
			want.SurchargesMetadata = got.SurchargesMetadata // null and [] are both no surcharges
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeRateMetadata(%q) = %+v; want %+v", s, got, want)
		}
	}
	for _, s := range []string{``, `{`, `{"usps_zone":x,"billable_weight":4,"surcharges_metadata":[]}`, `[]`} {
		var m shipping.RateMetadata
		if err := decodeRateMetadata(s, &m); err == nil {
			t.Errorf("decodeRateMetadata(%q) = %+v, nil; want an error", s, m)
		}
	}
}

// TestDecodeRateMetadataFastPath: what CreateShipment writes is read by the hand-written parser.
func TestDecodeRateMetadataFastPath(t *testing.T) {
	m := shipping.RateMetadata{USPSZone: 5, BillableWeight: 31,
		WeightMetadata: shipping.WeightMetadata{ActualOzWeight: 20.25, BillableOzWeight: 31, DimFactor: 166, DimThreshold: 1728, Volume: 320.5},
		SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(19)},
			{SurchargeType: "DAS", Surcharge: shipping.USD(395)}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got shipping.RateMetadata
	if !fastRateMetadata(string(b), &got) || !reflect.DeepEqual(got, m) {
		t.Errorf("fastRateMetadata(%s) = %+v; want the fast path to read %+v", b, got, m)
	}
}

// TestDecodeRateMetadataLegacy: rows written before the real product's field names were
// adopted are read in the new shape.
func TestDecodeRateMetadataLegacy(t *testing.T) {
	var got shipping.RateMetadata
	err := decodeRateMetadata(`{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19},{"type":"DAS","amount":3.95}]}`, &got)
	want := shipping.RateMetadata{USPSZone: 8, BillableWeight: 31,
		WeightMetadata: shipping.WeightMetadata{BillableOzWeight: 31, DimFactor: 166, DimThreshold: 1728},
		SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(19)},
			{SurchargeType: "DAS", Surcharge: shipping.USD(395)}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("decodeRateMetadata(legacy) = %+v, %v; want %+v", got, err, want)
	}
}

func FuzzDecodeRateMetadata(f *testing.F) {
	f.Add(metaOneSurcharge)
	f.Add(metaNoSurcharge)
	f.Fuzz(func(t *testing.T, s string) {
		var fast shipping.RateMetadata
		if !fastRateMetadata(s, &fast) {
			return
		}
		// Whatever the fast path accepts, encoding/json must read the same.
		var want shipping.RateMetadata
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("fast path accepted %q, which is not JSON: %v", s, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("fastRateMetadata(%q) = %+v; encoding/json reads %+v", s, fast, want)
		}
	})
}

// BenchmarkDecodeRateMetadata compares the hand-written parser with encoding/json on what
// CreateShipment writes.
func BenchmarkDecodeRateMetadata(b *testing.B) {
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var m shipping.RateMetadata
		for b.Loop() {
			if err := decodeRateMetadata(metaOneSurcharge, &m); err != nil {
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
