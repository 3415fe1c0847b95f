package store

import (
	"reflect"
	"testing"

	"github.com/waybill/waybill/shipping"
)

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
			got, err := encodeSurcharges(tt.in, "USD")
			if err != nil || got != tt.stored {
				t.Fatalf("encodeSurcharges(%v) = %q, %v; want %q", tt.in, got, err, tt.stored)
			}
			back, err := decodeSurcharges(got, "USD")
			if err != nil || !reflect.DeepEqual(back, tt.in) {
				t.Errorf("decodeSurcharges(%q) = %v, %v; want %v", got, back, err, tt.in)
			}
		})
	}
	for _, bad := range [][]shipping.SurchargeMetadata{
		{{SurchargeType: "FUEL", Surcharge: shipping.Money{Amount: 0.195, Currency: "USD"}}},
		{{SurchargeType: "FUEL", Surcharge: shipping.Money{Amount: 0.19, Currency: "EUR"}}},
	} {
		if got, err := encodeSurcharges(bad, "USD"); err == nil {
			t.Errorf("encodeSurcharges(%v) = %q; want an error", bad, got)
		}
	}
	for _, bad := range []string{``, `[]`, `{"FUEL":1.5}`, `{"FUEL":"1"}`, `{"FUEL":1}x`, `{"FUEL":1`} {
		if got, err := decodeSurcharges(bad, "USD"); err == nil {
			t.Errorf("decodeSurcharges(%q) = %v; want an error", bad, got)
		}
	}
}
