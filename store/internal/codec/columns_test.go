package codec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

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

// TestDecodeRateMetadataLegacy: rows written before the real product's field names were
// adopted are read in the new shape.
func TestDecodeRateMetadataLegacy(t *testing.T) {
	var got shipping.RateMetadata
	err := DecodeRateMetadata(`{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19},{"type":"DAS","amount":3.95}]}`, &got)
	want := shipping.RateMetadata{USPSZone: 8, BillableWeight: 31,
		WeightMetadata: shipping.WeightMetadata{BillableOzWeight: 31, DimFactor: 166, DimThreshold: 1728},
		SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(19)},
			{SurchargeType: "DAS", Surcharge: shipping.USD(395)}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("DecodeRateMetadata(legacy) = %+v, %v; want %+v", got, err, want)
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

// TestFastQuotes: quotes as a rendering holds them are read back by the hand-written parser,
// and anything else by encoding/json, to the same rates.
func TestFastQuotes(t *testing.T) {
	edd := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	rates := []shipping.Rate{
		{ID: "r1", ShipmentID: "s1", Carrier: "USPS", Service: "GroundAdvantage", Price: shipping.USD(745), EstimatedDeliveryDays: 3,
			EstimatedDeliveryDate: shipping.Timestamp{Time: edd}, RateMetadata: shipping.RateMetadata{USPSZone: 5, BillableWeight: 31,
				WeightMetadata:     shipping.WeightMetadata{ActualOzWeight: 20.25, BillableOzWeight: 31, DimFactor: 166, DimThreshold: 1728, Volume: 320.5},
				SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(45)}}, CarrierVersion: 2}},
		{ID: "r2", ShipmentID: "s1", Carrier: "UPS", Service: "Ground", Price: shipping.USD(1299), EstimatedDeliveryDays: 5,
			EstimatedDeliveryDate: shipping.Timestamp{Time: edd}, RateMetadata: shipping.RateMetadata{USPSZone: 8, SurchargesMetadata: []shipping.SurchargeMetadata{}}},
	}
	b, err := json.Marshal(rates)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(b), string(b) + `,"shipping_label":null}`, `[]`} {
		got, ok := fastQuotes(s)
		want := rates
		if s == `[]` {
			want = []shipping.Rate{}
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("fastQuotes(%s) =\n %+v, %v; want\n %+v", s, got, ok, want)
		}
	}
	if _, ok := fastQuotes(strings.Replace(string(b), `{"id"`, `{ "id"`, 1)); ok {
		t.Error("fastQuotes read a shape it does not know")
	}
}

// FuzzFastQuotes: whatever the hand-written parser accepts, encoding/json reads the same.
func FuzzFastQuotes(f *testing.F) {
	f.Add(`[{"id":"r1","shipment_id":"s1","carrier":"USPS","service":"Ground","price":{"amount":7.45,"currency":"USD"},` +
		`"estimated_delivery_date":"2026-11-25T00:00:00.000000Z","estimated_delivery_days":3,"rate_metadata":` + metaOneSurcharge + `}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastQuotes(s)
		if !ok {
			return
		}
		var want []shipping.Rate
		if err := json.NewDecoder(strings.NewReader(s)).Decode(&want); err != nil {
			t.Fatalf("fastQuotes(%q) accepted what encoding/json refuses: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fastQuotes(%q) = %+v; encoding/json reads %+v", s, got, want)
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
