package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/rating"
	"github.com/waybill/waybill/store"
)

const fuzzShipmentBody = `{"origin": {"name": "A", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "B", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

// FuzzShipmentRequest feeds arbitrary bodies through POST /shipments' decoding, validation and
// rate shopping: every outcome is a rate list or an error answered with a 4xx code, never a
// panic or a 500.
func FuzzShipmentRequest(f *testing.F) {
	for _, seed := range []string{
		fuzzShipmentBody,
		`{}`, `[]`, `null`, `{"origin": null}`, `{"parcel": {"weight": 1e400}}`,
		`{"parcel": {"length": -1, "width": 1e308, "height": 0.0000001, "length_unit": "CM", "weight": 1e-300, "weight_unit": "KG"}}`,
		`{"origin": {"zip": "9\u0000058", "country": "us"}, "ship_date": "2026-02-30"}`,
		`{"destination": {"zip": "99501-0000", "state": "AK", "country": "US"}, "rate_shopping_strategy": "FASTEST"}`,
		`{"custom_reference_1": "\ud800", "brand": 5}`,
	} {
		f.Add([]byte(seed))
	}
	shopper := rating.NewShopper(carrier.SampleCarriers()...)
	profile := rating.LoadProfile(shipping.DefaultProfileKey, rating.DefaultProfile(), testStart)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req shipping.ShipmentRequest
		check := func(stage string, err error) {
			if e := errorFor(err); e.Status >= 500 || e.Status < 400 {
				t.Fatalf("%s(%q) answers %d %s: %v", stage, body, e.Status, e.Code, err)
			}
		}
		if err := decodeStrict(body, &req); err != nil {
			check("decode", err)
			return
		}
		day, err := req.Validate(testStart)
		if err != nil {
			var ve *shipping.ValidationError
			if !errors.As(err, &ve) || len(ve.Fields) == 0 {
				t.Fatalf("Validate(%q) = %v; want a ValidationError with fields", body, err)
			}
			check("validate", err)
			return
		}
		rates, _, err := shopper.Shop(context.Background(), profile, &req, day)
		if err != nil {
			var re *shipping.RateError
			if !errors.As(err, &re) {
				t.Fatalf("Shop(%q) = %v; want a RateError", body, err)
			}
			check("shop", err)
			return
		}
		if len(rates) == 0 {
			t.Fatalf("Shop(%q) = no rates and no error", body)
		}
		for _, r := range rates {
			if r.TotalCents <= 0 || r.TotalCents != r.PostageCents+r.SurchargesCents || r.RetailCents < r.TotalCents ||
				r.EstimatedDeliveryDays < 1 || r.RateMetadata.USPSZone < 1 || r.RateMetadata.USPSZone > 8 {
				t.Fatalf("Shop(%q): implausible rate %+v", body, r)
			}
		}
	})
}

// FuzzDecodeCursor checks that decodeCursor accepts only what encodeCursor makes, and that the
// cursor parameters never fail with anything but a 400.
func FuzzDecodeCursor(f *testing.F) {
	valid := encodeCursor(store.Key{CreatedAt: 1795305600000000, ID: "00000000-0000-7000-8000-00000000000a"})
	for _, seed := range []string{valid, "", "v1", "djE6MTox", valid + "A", valid[:len(valid)-1], "====", "djE6LTE6MDAwMDAwMDAtMDAwMC03MDAwLTgwMDAtMDAwMDAwMDAwMDBh"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := decodeCursor(s)
		if err == nil {
			if again := encodeCursor(k); again != s {
				t.Fatalf("decodeCursor(%q) = %+v, which encodes as %q", s, k, again)
			}
			if k.CreatedAt < 0 || !uuidText.MatchString(k.ID) {
				t.Fatalf("decodeCursor(%q) = %+v; not a key encodeCursor makes", s, k)
			}
		}
		for _, name := range []string{"after", "before"} {
			_, _, err := parseKeyset(url.Values{name: {s}})
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
				t.Fatalf("parseKeyset(%s=%q) = %v; want a 400", name, s, err)
			}
		}
	})
}
