package rating

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
)

// abroad is a request from Los Angeles to dest with a declaration the route accepts.
func abroad(dest shipping.Address, incoterm string) *shipping.ShipmentRequest {
	r := shipmentRequest("90058", "CA", "10001", "NY")
	r.Destination = &dest
	r.CustomsInfo = customsInfo()
	r.CustomsInfo.Incoterm = &incoterm
	return r
}

var (
	toronto = shipping.Address{Name: "Jane Roe", Street1: "1 Front St W", City: "Toronto", State: "ON", Zip: "M5V 2T6", Country: "CA"}
	london  = shipping.Address{Name: "John Bull", Street1: "10 Downing St", City: "London", Zip: "SW1A 2AA", Country: "GB"}
	tokyo   = shipping.Address{Name: "Taro Yamada", Street1: "1-1 Chiyoda", City: "Chiyoda-ku", State: "13", Zip: "100-0001", Country: "JP"}
	sydney  = shipping.Address{Name: "Bruce", Street1: "1 George St", City: "Sydney", State: "NSW", Zip: "2000", Country: "AU"}
	brazil  = shipping.Address{Name: "Ana", Street1: "Av. Paulista 1000", City: "São Paulo", State: "SP", Zip: "01310-100", Country: "BR"}
)

func TestShopInternational(t *testing.T) {
	def := LoadProfile(shipping.DefaultProfileKey, DefaultProfile(), time.Time{})
	shopper := NewShopper(carrier.SampleCarriers()...)
	tests := []struct {
		name     string
		req      *shipping.ShipmentRequest
		zone     int
		services []string // carrier service, cheapest first
		ddpFee   float64
		code     string   // a RateError's code, when no rate
		reasons  []string // carrier: message, when no rate
	}{
		{"Toronto", abroad(toronto, "DAP"), 1, []string{"POSTLINE INTERNATIONAL_PARCEL", "PARCELCO INTERNATIONAL_EXPRESS"}, 0, "", nil},
		{"London", abroad(london, "DAP"), 3, []string{"POSTLINE INTERNATIONAL_PARCEL", "PARCELCO INTERNATIONAL_EXPRESS"}, 0, "", nil},
		{"Tokyo", abroad(tokyo, "DAP"), 4, []string{"POSTLINE INTERNATIONAL_PARCEL", "PARCELCO INTERNATIONAL_EXPRESS"}, 0, "", nil},
		{"Tokyo DDP", abroad(tokyo, "DDP"), 4, []string{"PARCELCO INTERNATIONAL_EXPRESS"}, 15, "", nil},
		{"a country no service covers", abroad(brazil, "DAP"), 0, nil, 0, shipping.CodeNoRates, []string{
			"POSTLINE: country not serviced", "PARCELCO: country not serviced", "SPEEDSHIP: country not serviced", "REGIONALX: country not serviced"}},
		{"DDP where no service has a fee", func() *shipping.ShipmentRequest {
			r := abroad(sydney, "DDP")
			p := LoadProfile("post", ProfileInput{Name: "p", Carriers: []string{"POSTLINE"}}, time.Time{})
			r.RateShoppingProfile = p.Key
			return r
		}(), 0, nil, 0, shipping.CodeNoRates, []string{"POSTLINE: DDP not offered"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			day, err := tt.req.Validate(testDay)
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			p := def
			if tt.req.RateShoppingProfile != shipping.DefaultProfileKey {
				p = LoadProfile("post", ProfileInput{Name: "p", Carriers: []string{"POSTLINE"}}, time.Time{})
			}
			rates, _, err := shopper.Shop(context.Background(), p, tt.req, day)
			if tt.code != "" {
				var re *shipping.RateError
				var got []string
				if errors.As(err, &re) {
					for _, r := range re.Reasons {
						got = append(got, r.Carrier+": "+r.Message)
					}
				}
				if re == nil || re.Code != tt.code || !slices.Equal(got, tt.reasons) {
					t.Fatalf("Shop = %v, %v (%q); want %s with %q", rates, err, got, tt.code, tt.reasons)
				}
				return
			}
			if err != nil {
				t.Fatalf("Shop = %v", err)
			}
			var got []string
			for _, r := range rates {
				got = append(got, r.Carrier+" "+r.Service)
				m := r.RateMetadata
				if m.CountryZone != tt.zone || m.USPSZone != 0 {
					t.Errorf("%s %s: country_zone %d, usps_zone %d; want %d, 0", r.Carrier, r.Service, m.CountryZone, m.USPSZone, tt.zone)
				}
				var fee float64
				if m.DDPFee != nil {
					fee = m.DDPFee.Amount
				}
				if fee != tt.ddpFee {
					t.Errorf("%s %s: ddp_fee %v; want %v", r.Carrier, r.Service, fee, tt.ddpFee)
				}
				if r.TotalCents != r.PostageCents+r.SurchargesCents || r.Price != shipping.USD(r.TotalCents) {
					t.Errorf("%s %s: price %v is not postage %d + surcharges %d", r.Carrier, r.Service, r.Price, r.PostageCents, r.SurchargesCents)
				}
			}
			if !slices.Equal(got, tt.services) {
				t.Errorf("Shop rates = %q; want %q", got, tt.services)
			}
		})
	}
}

func customsInfo() *shipping.CustomsInfo {
	hs, term := "6109.10.0012", "ddp"
	return &shipping.CustomsInfo{CustomsSigner: " Jane Doe ", Incoterm: &term, CustomsItems: []shipping.CustomsItem{
		{Description: "Cotton T-shirt", HarmonizedSystemCode: &hs, OriginCountry: "us", Quantity: 2, Value: 19.99, Weight: 8, WeightUnit: "oz"},
	}}
}
