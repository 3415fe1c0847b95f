package store

import (
	"reflect"
	"testing"

	"github.com/waybill/waybill/store/internal/codec"
)

func TestDifferingFields(t *testing.T) {
	tests := []struct {
		a, b string
		want []string
	}{
		{`{"a":1,"b":[1,2]}`, `{"a":1,"b":[1,2]}`, nil},
		{`{"a":1,"b":2}`, `{"a":1,"b":3}`, []string{"b"}},
		{`{"to":{"city":"Boston","zip":"02101"}}`, `{"to":{"city":"Cambridge","zip":"02101"}}`, []string{"to.city"}},
		{`{"rates":[{"p":1},{"p":2}]}`, `{"rates":[{"p":1},{"p":3}]}`, []string{"rates[1].p"}},
		{`{"rates":[1,2]}`, `{"rates":[1]}`, []string{"rates"}},
		{`{"a":{"x":1},"b":1}`, `{"a":null,"c":1}`, []string{"a", "b", "c"}},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, nil}, // the same values in another order: nothing finer
		{`{"a":1}`, `{"a":1`, []string{"rendering"}},
		{`{"a":1}`, `[1]`, []string{"rendering"}},
	}
	for _, tt := range tests {
		if got := differingFields("", []byte(tt.a), []byte(tt.b), nil); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("differingFields(%s, %s) = %q; want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCompareCopy(t *testing.T) {
	fresh := []byte(`{"id":"s1","status":"OPEN"}`)
	damaged := codec.Pack(fresh)
	damaged[len(damaged)-1] ^= 1
	tests := []struct {
		name   string
		packed []byte
		want   []Difference
	}{
		{"the same", codec.Pack(fresh), nil},
		{"a value differs", codec.Pack([]byte(`{"id":"s1","status":"PURCHASED"}`)), []Difference{{"s1", kindShipment, "status"}}},
		{"the keys in another order", codec.Pack([]byte(`{"status":"OPEN","id":"s1"}`)), []Difference{{"s1", kindShipment, "rendering"}}},
		{"damaged", damaged, []Difference{{"s1", kindShipment, "packed"}}},
		{"not a packed value", []byte("{}"), []Difference{{"s1", kindShipment, "packed"}}},
	}
	for _, tt := range tests {
		if got := compareCopy("s1", kindShipment, tt.packed, fresh, nil); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("compareCopy, %s = %v; want %v", tt.name, got, tt.want)
		}
	}
}
