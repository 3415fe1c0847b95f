package store

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/waybill/waybill/shipping"
)

func TestDecodeRateMetadata(t *testing.T) {
	for _, s := range []string{
		`{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19}]}`,
		`{"zone":1,"billable_weight_oz":2400,"surcharges":[{"type":"FUEL","amount":12.5},{"type":"EDAS","amount":4.95}]}`,
		`{"zone":3,"billable_weight_oz":4,"surcharges":[]}`,
		`{"zone":3, "billable_weight_oz":4,"surcharges":[]}`,                          // spacing: slow path
		`{"billable_weight_oz":4,"zone":3,"surcharges":null}`,                         // other order: slow path
		`{"zone":3,"billable_weight_oz":4,"surcharges":[{"type":"A\"B","amount":1}]}`, // escapes: slow path
		`{"zone":2,"billable_weight_oz":9,"surcharges":[{"type":"FUEL","amount":1e2}]}`,
	} {
		var got, want shipping.RateMetadata
		if err := decodeRateMetadata(s, &got); err != nil {
			t.Fatalf("decodeRateMetadata(%q) = %v", s, err)
		}
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		if want.Surcharges == nil {
			want.Surcharges = got.Surcharges // null and [] are both no surcharges
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeRateMetadata(%q) = %+v; want %+v", s, got, want)
		}
	}
	for _, s := range []string{``, `{`, `{"zone":x,"billable_weight_oz":4,"surcharges":[]}`, `[]`} {
		var m shipping.RateMetadata
		if err := decodeRateMetadata(s, &m); err == nil {
			t.Errorf("decodeRateMetadata(%q) = %+v, nil; want an error", s, m)
		}
	}
}

func FuzzDecodeRateMetadata(f *testing.F) {
	f.Add(`{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19}]}`)
	f.Add(`{"zone":3,"billable_weight_oz":4,"surcharges":[]}`)
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
