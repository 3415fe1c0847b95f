package ingest

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

func TestShipmentRequest(t *testing.T) {
	order := Order{ID: "o1", OrderID: "gid://shop/Order/1", Name: "#1001", FulfillmentOrders: []FulfillmentOrder{
		{ID: "fo1", Destination: Address{Name: "Jane Doe", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"}, WeightOz: 24},
		{ID: "fo2", Destination: Address{Name: "John Roe", Street1: "1 Main St", City: "Reno", State: "NV", Zip: "89501", Country: "US"}},
	}}
	origin := &shipping.Address{Name: "Acme Warehouse"}
	box := &shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 2, WeightUnit: "LB"}
	boxNoWeight := &shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN"}
	ref := "mine"
	tests := []struct {
		name       string
		fo         string
		req        shipping.ShipmentRequest
		wantTo     string
		wantParcel shipping.Parcel
		wantRef    string
		wantFields []string
	}{
		{"first fulfillment order, default box, items' weight", "", shipping.ShipmentRequest{Origin: origin},
			"Jane Doe", shipping.Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN", Weight: 24, WeightUnit: "OZ"}, "#1001", nil},
		{"the caller's parcel wins", "fo1", shipping.ShipmentRequest{Origin: origin, Parcel: box},
			"Jane Doe", *box, "#1001", nil},
		{"the caller's box without a weight weighs the items", "", shipping.ShipmentRequest{Origin: origin, Parcel: boxNoWeight},
			"Jane Doe", shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 24, WeightUnit: "OZ"}, "#1001", nil},
		{"the caller's reference wins", "", shipping.ShipmentRequest{Origin: origin, CustomReference1: &ref},
			"Jane Doe", shipping.Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN", Weight: 24, WeightUnit: "OZ"}, "mine", nil},
		{"a fulfillment order without weights needs a parcel", "fo2", shipping.ShipmentRequest{Origin: origin},
			"", shipping.Parcel{}, "", []string{"parcel.weight"}},
		{"second fulfillment order with a parcel", "fo2", shipping.ShipmentRequest{Origin: origin, Parcel: box},
			"John Roe", *box, "#1001", nil},
		{"unknown fulfillment order", "fo9", shipping.ShipmentRequest{Origin: origin},
			"", shipping.Parcel{}, "", []string{"fulfillment_order_id"}},
		{"a destination may not be given", "", shipping.ShipmentRequest{Origin: origin, Destination: &shipping.Address{Name: "X"}},
			"", shipping.Parcel{}, "", []string{"destination"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ShipmentRequest(order, tt.fo, "", tt.req)
			var v *shipping.ValidationError
			if tt.wantFields != nil {
				if !errors.As(err, &v) || len(v.Fields) != len(tt.wantFields) {
					t.Fatalf("ShipmentRequest = %v; want errors on %v", err, tt.wantFields)
				}
				for i, f := range tt.wantFields {
					if v.Fields[i].Field != f {
						t.Errorf("error %d on %s; want %s", i, v.Fields[i].Field, f)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ShipmentRequest = %v", err)
			}
			if got.Destination.Name != tt.wantTo || *got.Parcel != tt.wantParcel || *got.CustomReference1 != tt.wantRef || got.Origin != origin {
				t.Errorf("ShipmentRequest = to %s, parcel %+v, ref %s; want to %s, parcel %+v, ref %s", got.Destination.Name,
					*got.Parcel, *got.CustomReference1, tt.wantTo, tt.wantParcel, tt.wantRef)
			}
		})
	}
	if box.Weight != 2 || boxNoWeight.Weight != 0 {
		t.Error("ShipmentRequest changed the caller's parcel")
	}
}

func TestCheckShipmentFields(t *testing.T) {
	today := time.Date(2026, 11, 22, 3, 42, 3, 0, time.UTC)
	origin := func() *shipping.Address {
		return &shipping.Address{Name: "Acme Warehouse", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	}
	tests := []struct {
		name       string
		req        shipping.ShipmentRequest
		wantFields []string
	}{
		{"origin alone", shipping.ShipmentRequest{Origin: origin()}, nil},
		{"no origin", shipping.ShipmentRequest{}, []string{"origin"}},
		{"a bad parcel", shipping.ShipmentRequest{Origin: origin(), Parcel: &shipping.Parcel{Length: 1, Width: 1, Height: 1, LengthUnit: "IN", Weight: -1, WeightUnit: "OZ"}}, []string{"parcel.weight"}},
		{"a destination", shipping.ShipmentRequest{Origin: origin(), Destination: origin()}, []string{"destination"}},
		{"a bad format", shipping.ShipmentRequest{Origin: origin(), LabelFormat: "GIF"}, []string{"label_format"}},
	}
	for _, tt := range tests {
		err := CheckShipmentFields(tt.req, today)
		var v *shipping.ValidationError
		if tt.wantFields == nil {
			if err != nil {
				t.Errorf("%s: CheckShipmentFields = %v", tt.name, err)
			}
			continue
		}
		if !errors.As(err, &v) || len(v.Fields) != len(tt.wantFields) || v.Fields[0].Field != tt.wantFields[0] {
			t.Errorf("%s: CheckShipmentFields = %v; want errors on %v", tt.name, err, tt.wantFields)
		}
	}
}

// TestOrderDeclaration: an order to another country gets its customs declaration from its line
// items and duties; a caller's wins; a line without HS code or origin is named.
func TestOrderDeclaration(t *testing.T) {
	cents := func(n int64) *int64 { return &n }
	oz := func(f float64) *float64 { return &f }
	shirt := LineItem{ID: "li1", ProductTitle: "Cotton T-shirt", VariantTitle: "Large", Quantity: 2, RequiresShipping: true,
		WeightOz: oz(7), VariantWeightOz: oz(6), VariantPriceCents: cents(1999), UnitPriceCents: cents(2500),
		HarmonizedSystemCode: "6109.10", CountryOfOrigin: "PT"}
	mug := LineItem{ID: "li2", ProductTitle: "Mug", Quantity: 1, RequiresShipping: true, WeightOz: oz(12), UnitPriceCents: cents(900),
		HarmonizedSystemCode: "6912.00", CountryOfOrigin: "US"}
	card := LineItem{ID: "li3", ProductTitle: "Gift card", Quantity: 1}
	noHS := mug
	noHS.HarmonizedSystemCode = ""
	noOrigin := mug
	noOrigin.CountryOfOrigin = ""
	toronto := Address{Name: "Jane Roe", Street1: "1 Front St W", City: "Toronto", State: "ON", Zip: "M5V 2T6", Country: "CA"}
	order := func(items ...LineItem) Order {
		return Order{Name: "#1002", FulfillmentOrders: []FulfillmentOrder{{ID: "fo1", Destination: toronto, Incoterm: "DDP", LineItems: items, WeightOz: 24}}}
	}
	la := &shipping.Address{Name: "Acme", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	hs := func(s string) *string { return &s }
	ddp := "DDP"
	tests := []struct {
		name   string
		order  Order
		req    shipping.ShipmentRequest
		want   *shipping.CustomsInfo
		fields []string
	}{
		{"from the line items", order(shirt, mug, card), shipping.ShipmentRequest{Origin: la}, &shipping.CustomsInfo{CustomsSigner: "Acme Inc",
			Incoterm: &ddp, CustomsItems: []shipping.CustomsItem{
				{Description: "Cotton T-shirt - Large", HarmonizedSystemCode: hs("6109.10"), OriginCountry: "PT", Quantity: 2, Value: 39.98, Weight: 12, WeightUnit: "OZ"},
				{Description: "Mug", HarmonizedSystemCode: hs("6912.00"), OriginCountry: "US", Quantity: 1, Value: 9, Weight: 12, WeightUnit: "OZ"}}}, nil},
		{"the caller's declaration wins", order(noHS), shipping.ShipmentRequest{Origin: la, CustomsInfo: &shipping.CustomsInfo{CustomsSigner: "Me"}},
			&shipping.CustomsInfo{CustomsSigner: "Me"}, nil},
		{"a line without HS code", order(shirt, noHS), shipping.ShipmentRequest{Origin: la}, nil, []string{"line_items[1].harmonized_system_code"}},
		{"a line without origin", order(noOrigin), shipping.ShipmentRequest{Origin: la}, nil, []string{"line_items[0].country_of_origin"}},
		{"at home, none", Order{FulfillmentOrders: []FulfillmentOrder{{Destination: Address{Country: "US"}, LineItems: []LineItem{noHS}, WeightOz: 8}}},
			shipping.ShipmentRequest{Origin: la}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ShipmentRequest(tt.order, "", "Acme Inc", tt.req)
			var v *shipping.ValidationError
			var fields []string
			if errors.As(err, &v) {
				for _, f := range v.Fields {
					fields = append(fields, f.Field)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fields, tt.fields) {
				t.Fatalf("ShipmentRequest fields = %v; want %v", fields, tt.fields)
			}
			if tt.fields == nil && !reflect.DeepEqual(got.CustomsInfo, tt.want) {
				t.Errorf("ShipmentRequest customs_info = %+v; want %+v", got.CustomsInfo, tt.want)
			}
		})
	}
}
