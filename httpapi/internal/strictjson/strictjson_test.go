package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping"
)

// shipmentBody is a POST /shipments body.
const shipmentBody = `{"origin": {"name": "A", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "B", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

// FuzzExactKeys: exactKeys, the allocation-free check every accepted body takes, refuses a
// body exactly when refusedKeys, which names the refused key or nulls, finds one.
func FuzzExactKeys(f *testing.F) {
	for _, s := range []string{`{"name":"a","items":[{"a":1}]}`, `{"NAME":"a"}`, `{"tags":{"x":{"A":1}}}`,
		`{"inner":{"N":1},"e":"x"}`, `{"n\u0061me":"a"}`, `{"items":[{},{"b":[1,{"c":2}]}]}`, `[{"a":1}]`, `"x"`,
		`{"note":null}`, `{"name":null}`, `{"items":[null]}`, `{"tags":{"x":null}}`, `null`} {
		f.Add([]byte(s))
	}
	type item struct {
		A int `json:"a"`
	}
	type body struct {
		E     string `json:"e"`
		Name  string `json:"name"`
		Inner *struct{ N int }
		Items []item          `json:"items"`
		Tags  map[string]item `json:"tags"`
		Note  *string         `json:"note" nullable:"true"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Check(data) != nil {
			return
		}
		exact := exactKeys(data, reflect.TypeFor[*body]())
		var v *body
		named, nulls := refusedKeys(data, v)
		if found := named != "" || len(nulls) > 0; exact == found {
			t.Fatalf("exactKeys(%q) = %v; refusedKeys = %q, %q", data, exact, named, nulls)
		}
	})
}

// FuzzCheckJSONFastPath: Check's allocation-free path accepts a body only when the token
// pass does, and accepts every body the token pass does whose objects are small enough.
func FuzzCheckJSONFastPath(f *testing.F) {
	for _, s := range []string{`{"name":"a","tags":["x"],"n":1.5}`, `{"a":{"a":{}}}`, `{"a":1,"a":2}`,
		`{"a":1,"\u0061":2}`, `{"a\\":1,"a":2}`, `"a\u0000"`, `"a\\u0000"`, `{"k\u0000":1}`, `[1,[2,{"x":[]}]] `,
		strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
		strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), `{"a":{"b":1},"b":{"a":1}}`, ` true `, `-1.5e3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		slow := checkJSONTokens(data)
		if !utf8.Valid(data) || !json.Valid(data) {
			return
		}
		fast := cleanJSON(data)
		if fast && slow != nil {
			t.Fatalf("cleanJSON(%q) = true; the token pass says %v", data, slow)
		}
		if !fast && slow == nil && !bigObject(data) {
			t.Fatalf("cleanJSON(%q) = false; the token pass accepts it", data)
		}
	})
}

// bigObject reports whether a body without duplicate keys has an object of more than
// maxCleanKeys keys.
func bigObject(data []byte) bool {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	var big func(v any) bool
	big = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if len(v) > maxCleanKeys {
				return true
			}
			for _, e := range v {
				if big(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if big(e) {
					return true
				}
			}
		}
		return false
	}
	return big(v)
}

// BenchmarkCheckJSON: Check (allocation-free checks, the token pass only for a refusal)
// beside the token pass alone, and exactKeys, on a shipment request body.
func BenchmarkCheckJSON(b *testing.B) {
	body := []byte(shipmentBody)
	for _, c := range []struct {
		name  string
		check func([]byte) error
	}{{"tokens", checkJSONTokens}, {"Check", Check}, {"exactKeys", func(b []byte) error {
		if !exactKeys(b, reflect.TypeFor[*shipping.ShipmentRequest]()) {
			return errors.New("a key is not a field")
		}
		return nil
	}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.check(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
