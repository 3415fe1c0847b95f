package shipping

import (
	"errors"
	"reflect"
	"testing"
)

func TestInsuredCents(t *testing.T) {
	tests := []struct {
		amount float64
		want   int64
		code   string // the field error's code, "" for none
	}{
		{100, 10000, ""},
		{99.95, 9995, ""},
		{0.01, 1, ""},
		{5000, 500000, ""},
		{0.1 + 0.2, 30, ""}, // float noise is not a fraction of a cent
		{0, 0, "not_positive"},
		{-5, 0, "not_positive"},
		{5000.01, 0, "too_large"},
		{1e300, 0, "too_large"},
		{10.005, 0, "invalid"},
		{1e-9, 0, "invalid"}, // positive, but not a cent: never silently no insurance
		{5e-324, 0, "invalid"},
	}
	for _, tt := range tests {
		got, err := InsuredCents(tt.amount)
		var ve *ValidationError
		code := ""
		if errors.As(err, &ve) {
			code = ve.Fields[0].Code
			if ve.Fields[0].Field != "insurance_amount" {
				t.Errorf("InsuredCents(%v) reports field %q; want insurance_amount", tt.amount, ve.Fields[0].Field)
			}
		} else if err != nil {
			t.Fatalf("InsuredCents(%v) = %v", tt.amount, err)
		}
		if got != tt.want || code != tt.code {
			t.Errorf("InsuredCents(%v) = %d, %q; want %d, %q", tt.amount, got, code, tt.want, tt.code)
		}
	}
}

func TestInsuranceCents(t *testing.T) {
	tests := []struct {
		insured, want int64
	}{
		{0, 0},
		{1, 85},
		{100_00, 85},
		{100_01, 170},
		{250_00, 255},
		{5000_00, 4250},
	}
	for _, tt := range tests {
		if got := InsuranceCents(tt.insured); got != tt.want {
			t.Errorf("InsuranceCents(%d) = %d; want %d", tt.insured, got, tt.want)
		}
	}
}

func TestRateInsured(t *testing.T) {
	fuel := SurchargeMetadata{SurchargeType: "FUEL", Surcharge: USD(19)}
	surcharges := make([]SurchargeMetadata, 1, 4) // room to append: Insured must not write into it
	surcharges[0] = fuel
	r := Rate{PostageCents: 928, SurchargesCents: 19, TotalCents: 947, RetailCents: 1184, Price: USD(947),
		RateMetadata: RateMetadata{USPSZone: 8, SurchargesMetadata: surcharges}}
	got := r.Insured(255)
	want := Rate{PostageCents: 928, SurchargesCents: 274, TotalCents: 1202, RetailCents: 1439, Price: USD(1202),
		RateMetadata: RateMetadata{USPSZone: 8, SurchargesMetadata: []SurchargeMetadata{fuel, {SurchargeType: "INSURANCE", Surcharge: USD(255)}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Insured(255) = %+v; want %+v", got, want)
	}
	if again := r.Insured(85); len(again.RateMetadata.SurchargesMetadata) != 2 || again.RateMetadata.SurchargesMetadata[1].Surcharge != USD(85) ||
		len(r.RateMetadata.SurchargesMetadata) != 1 {
		t.Errorf("Insured changed the rate it was called on: %+v, %+v", r, again)
	}
	if got := r.Insured(0); !reflect.DeepEqual(got, r) {
		t.Errorf("Insured(0) = %+v; want the rate unchanged", got)
	}
}
