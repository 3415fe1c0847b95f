package store

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// fixture reads a file of the store suite's testdata: packed values and renderings as the code
// before migration 028 stored them for boughtShipment, bought (bought_v4.hex, its tracking code
// filled in a hole; bought.json), and OPEN (open_v3.hex, open.json: openFixture).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("storetest", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if strings.HasSuffix(name, ".hex") {
		if b, err = hex.DecodeString(string(b)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A shipment's packed value as stored before migration 028 gives back its rendering, its
// request and its quotes with their cents; its rendering alone is unpacked without the rest. A
// value of format 5 holds no request.
func TestUnpackShipment(t *testing.T) {
	want := openFixture()
	packed := fixture(t, "open_v3.hex")
	got := &shipping.Shipment{ID: want.ID}
	r, req, err := unpackShipment(packed, got)
	if err != nil || !bytes.Equal(r, fixture(t, "open.json")) {
		t.Fatalf("unpackShipment = %.40q…, %v; want the rendering", r, err)
	}
	if wantReq, _ := requestJSON(want); string(req) != wantReq {
		t.Errorf("unpackShipment request = %s; want %s", req, wantReq)
	}
	if !reflect.DeepEqual(got.ShippingRates, want.ShippingRates) || !reflect.DeepEqual(got.Messages, want.Messages) ||
		got.Origin != want.Origin || got.Destination != want.Destination || got.Parcel != want.Parcel {
		t.Errorf("unpackShipment read\n %+v\nwant\n %+v", got, want)
	}
	if r, err := codec.AppendRendering([]byte("x"), packed, 3); err != nil || string(r) != "x"+string(fixture(t, "open.json")) {
		t.Errorf("appendRendering = %.40q…, %v; want the rendering after x", r, err)
	}
	for _, bad := range [][]byte{nil, {2}, packed[:len(packed)/2], append([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, packed[1:]...),
		codec.Pack(r)} {
		if _, _, err := unpackShipment(bad, &shipping.Shipment{}); err == nil {
			t.Errorf("unpackShipment(%.20x…): no error", bad)
		}
	}
}

// A shipment packed before shipments had messages (this value was packed by the code of
// then) reads without them, and renders again without them: GET shows no messages rather than
// an empty list, which would claim every carrier quoted.
func TestPackedShipmentWithoutMessages(t *testing.T) {
	s := &shipping.Shipment{ID: "s1", Status: shipping.StatusOpen}
	rendering, _, err := unpackShipment(mustHex(t, packedBeforeMessages), s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Messages != nil || bytes.Contains(rendering, []byte(`"messages"`)) {
		t.Errorf("a shipment packed before messages reads messages %#v from %s; want none", s.Messages, rendering)
	}
	s.ShipDate, s.Origin.Name = "2026-11-23", "A" // what its columns would hold
	if again, err := renderShipment(s); err != nil || !bytes.Equal(again, rendering) {
		t.Errorf("renderShipment of it = %s, %v; want its stored rendering %s", again, err, rendering)
	}
}

const packedBeforeMessages = "01b508ec020707f004047331119a06084f50454e2d860e14323032362d31312d323321900e024113e60c1231204d61696e2053740def0c0c41757374696e0ff50c0454580bf70c0a3738373031bb01a70ea301a50e25a30e02310da40e02380da40e023433a40e023257a50e319e0e1db9099701980e0472311bab0904733113ad0910504f53544c494e4513b5090c47524f554e4421bb0908392e343755be0908303030312da50669d9090238a902d909219609023205ad0911ff07359602139a08352b23b508026f198716a905f707107dc00e26e60ec012"

// openFixture is the shipment of open_v3.hex: boughtShipment before its purchase, its ids
// other (shp_1…, rate_1…).
func openFixture() *shipping.Shipment {
	s := boughtShipment()
	s.ID = strings.Replace(s.ID, "shp_0", "shp_1", 1)
	for i := range s.ShippingRates {
		s.ShippingRates[i].ID = strings.Replace(s.ShippingRates[i].ID, "rate_0", "rate_1", 1)
		s.ShippingRates[i].ShipmentID = s.ID
	}
	s.Status, s.ShippingLabel, s.Carrier, s.UpdatedAt = shipping.StatusOpen, nil, "", s.CreatedAt
	return s
}

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
