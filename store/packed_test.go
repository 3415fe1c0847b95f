package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// boughtShipment is a bought shipment with nine quotes, as the load test makes them.
func boughtShipment() *shipping.Shipment {
	at := shipping.Timestamp{Time: time.Date(2026, 11, 26, 1, 2, 3, 456789000, time.UTC)}
	s := &shipping.Shipment{ID: "shp_0a1b2c3d4e5f60718293a4b5", Status: shipping.StatusOpen, Brand: "default", ShipDate: "2026-11-26",
		Origin:              shipping.Address{Name: "A", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"},
		Destination:         shipping.Address{Name: "B", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"},
		ReturnAddress:       shipping.Address{Name: "A", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"},
		Parcel:              shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 20, WeightUnit: "OZ"},
		RateShoppingProfile: "default", RateShoppingStrategy: "ALL", LabelFormat: "PDF", CreatedAt: at, UpdatedAt: at}
	for i, c := range []string{"POSTLINE", "SPEEDSHIP", "CARGOWAY"} {
		for j, svc := range []string{"GROUND", "EXPRESS", "OVERNIGHT"} {
			cents := int64(900 + 137*i + 411*j)
			s.ShippingRates = append(s.ShippingRates, shipping.Rate{ID: fmt.Sprintf("rate_%024x", 9*i+j+1), ShipmentID: s.ID,
				Carrier: c, Service: svc, Price: shipping.USD(cents), EstimatedDeliveryDate: at, EstimatedDeliveryDays: 5 - 2*j,
				PostageCents: cents - 40, SurchargesCents: 40, TotalCents: cents, RetailCents: cents * 5 / 4,
				RateMetadata: shipping.RateMetadata{USPSZone: 8, BillableWeight: 20,
					WeightMetadata:     shipping.WeightMetadata{ActualOzWeight: 20, BillableOzWeight: 20, DimFactor: 139, DimThreshold: 1728, Volume: 320},
					SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(40)}}, CarrierVersion: 1}})
		}
	}
	s.Messages = []shipping.Reason{{Carrier: "REGIONALX", Service: "REGSL", Message: "parcel weighs more than 1 lb"}}
	purchased(s, s.ShippingRates[4], "lbl_0a1b2c3d4e5f60718293a4b5", "1Z999AA10123456784", at.Time, 0)
	return s
}

func BenchmarkPackShipment(b *testing.B) {
	s := boughtShipment()
	rendering, err := renderShipment(s)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rendering)))
	for b.Loop() {
		codec.Pack(rendering)
	}
}
