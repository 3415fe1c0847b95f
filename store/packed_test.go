package store

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// TestPackedStaysReadable: packed values are stored for good, so a value packed today (by this
// packDict and format) must unpack to the same bytes in every later build. A change to packDict
// or to lz's format fails here: it needs a new packVersion, with the old one still read.
func TestPackedStaysReadable(t *testing.T) {
	parts := [][]byte{[]byte(`{"id":"s1","status":"OPEN","shipping_rates":[]}`), []byte(`{"parcel":{}}`), {0x02, 0x04}}
	got, err := unpack(mustHex(t, packedToday), 3)
	if err != nil || !reflect.DeepEqual(got, parts) {
		t.Errorf("unpack(%s) = %q, %v; want %q", packedToday, got, err, parts)
	}
	if p := hex.EncodeToString(pack(parts...)); p != packedToday {
		t.Logf("pack now gives %s (a change that packs differently is fine if the old value still reads)", p)
	}
}

const packedToday = "012f0d0207f004047331119a06084f50454e199b050e73223a5b5d7d7b0d870c087d7d0204"

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A shipment's packed value gives back its rendering, its request and its quotes with their
// cents; its rendering alone is unpacked without the rest.
func TestPackShipment(t *testing.T) {
	edd := shipping.Timestamp{Time: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	s := &shipping.Shipment{ID: "s1", Status: shipping.StatusOpen,
		Origin: shipping.Address{Name: "A", Street1: "1 Main St", City: "Austin", State: "TX", Zip: "78701", Country: "US"},
		Parcel: shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 20, WeightUnit: "OZ"},
		ShippingRates: []shipping.Rate{
			{ID: "r1", ShipmentID: "s1", Carrier: "POSTLINE", Service: "GROUND", Price: shipping.USD(947), EstimatedDeliveryDate: edd,
				EstimatedDeliveryDays: 5, PostageCents: 928, SurchargesCents: 19, TotalCents: 947, RetailCents: 1184,
				RateMetadata: shipping.RateMetadata{USPSZone: 8, SurchargesMetadata: []shipping.SurchargeMetadata{}, CarrierVersion: 2}},
			{ID: "r2", ShipmentID: "s1", Carrier: "SPEEDSHIP", Service: "ECONOMY", Price: shipping.USD(1175), EstimatedDeliveryDate: edd,
				EstimatedDeliveryDays: 5, PostageCents: 1049, SurchargesCents: 126, TotalCents: 1175, RetailCents: 1469,
				RateMetadata: shipping.RateMetadata{USPSZone: 8, SurchargesMetadata: []shipping.SurchargeMetadata{}}},
		}}
	rendering, err := renderShipment(s)
	if err != nil {
		t.Fatal(err)
	}
	packed, err := packShipment(rendering, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) > len(rendering)/2 {
		t.Errorf("packed: %d bytes for a %d-byte rendering; want at most half", len(packed), len(rendering))
	}
	got := &shipping.Shipment{ID: s.ID, Status: s.Status}
	r, err := unpackShipment(packed, got)
	if err != nil || !bytes.Equal(r, rendering) {
		t.Fatalf("unpackShipment = %.40q…, %v; want the rendering", r, err)
	}
	if !reflect.DeepEqual(got.ShippingRates, s.ShippingRates) || got.Origin != s.Origin || got.Parcel != s.Parcel {
		t.Errorf("unpackShipment read\n %+v\nwant\n %+v", got, s)
	}
	if r, err := appendRendering([]byte("x"), packed, 3); err != nil || string(r) != "x"+string(rendering) {
		t.Errorf("appendRendering = %.40q…, %v; want the rendering after x", r, err)
	}
	for _, bad := range [][]byte{nil, {2}, packed[:len(packed)/2], append([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, packed[1:]...)} {
		if _, err := unpackShipment(bad, &shipping.Shipment{}); err == nil {
			t.Errorf("unpackShipment(%.20x…): no error", bad)
		}
	}
}
