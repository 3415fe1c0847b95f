package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// TestPackedStaysReadable: packed values are stored for good, so a value packed today (by this
// packDict and format) must unpack to the same bytes in every later build. A change to packDict
// or to lz's format fails here: it needs a new format version, with the old one still read.
func TestPackedStaysReadable(t *testing.T) {
	parts := [][]byte{[]byte(`{"id":"s1","status":"OPEN","shipping_rates":[]}`), []byte(`{"parcel":{}}`), {0x02, 0x04}}
	for _, stored := range []string{packedV1, packedChecked} {
		got, err := unpack(mustHex(t, stored), 3)
		if err != nil || !reflect.DeepEqual(got, parts) {
			t.Errorf("unpack(%s) = %q, %v; want %q", stored, got, err, parts)
		}
	}
	if p := hex.EncodeToString(pack(parts...)); p != packedChecked {
		t.Logf("pack now gives %s (a change that packs differently is fine if the old value still reads)", p)
	}
}

// Values as each format version stored them (packV1 before checksums; packChecked since).
const (
	packedV1      = "012f0d0207f004047331119a06084f50454e199b050e73223a5b5d7d7b0d870c087d7d0204"
	packedChecked = "03856ff4d5a4ea677c2f0d0207f004047331119a06084f50454e199b050e73223a5b5d7d7b0d870c087d7d0204"
)

// TestPackDictPinned: every format version packs against packDict, so values of all of them
// read only while it stays byte for byte the same. A format with another dictionary needs a new
// version, and this one kept while values of it exist.
func TestPackDictPinned(t *testing.T) {
	const want = "f0960ae2bd4bc1392cea8413eae97a075507566363f75ff5724f81a4f3f3137a"
	if got := fmt.Sprintf("%x", sha256.Sum256([]byte(packDict))); got != want {
		t.Errorf("SHA-256 of packDict = %s; want %s (versions 1 to 4 are packed against it)", got, want)
	}
}

// TestPackedDamage: a checked value damaged anywhere, by one byte changed, cut short or with a
// byte more, is an error when read whole, never other bytes; its rendering alone is an error
// or the very rendering packed (a byte of the other parts changed goes unread there).
func TestPackedDamage(t *testing.T) {
	s := boughtShipment()
	rendering, err := renderShipment(s)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := packShipment(rendering, s)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := markedAt(bytes.Replace(rendering, []byte(`"1Z999AA10123456784"`), trackingCodeMarkJSON, 1))
	req, cents, err := shipmentParts(s)
	if err != nil {
		t.Fatal(err)
	}
	holedValue := packHole(len(m.before), m.join(), req, cents).fill([]byte(`"1Z999AA10123456784"`))
	for name, v := range map[string][]byte{"packChecked": plain, "packHoled": holedValue} {
		if v[0] != map[string]byte{"packChecked": packChecked, "packHoled": packHoled}[name] {
			t.Fatalf("%s: version %d", name, v[0])
		}
		want, err := unpack(v, 3)
		if err != nil || !bytes.Equal(want[0], rendering) {
			t.Fatalf("%s: unpack = %.40q, %v; want the rendering", name, want, err)
		}
		for i := range v {
			for _, flip := range []byte{0x01, 0x80, 0xff} {
				bad := slices.Clone(v)
				bad[i] ^= flip
				if got, err := unpack(bad, 3); err == nil {
					t.Errorf("%s: byte %d ^ %#x: unpack = %.40q…, no error", name, i, flip, got)
				}
				if got, err := appendRendering(nil, bad, 3); err == nil && !bytes.Equal(got, rendering) {
					t.Errorf("%s: byte %d ^ %#x: appendRendering = %.40q…, no error", name, i, flip, got)
				}
			}
			if got, err := unpack(v[:i], 3); err == nil {
				t.Errorf("%s: cut to %d bytes: unpack = %.40q…, no error", name, i, got)
			}
		}
		if got, err := unpack(append(slices.Clone(v), 0), 3); err == nil {
			t.Errorf("%s: a byte more: unpack = %.40q…, no error", name, got)
		}
	}
}

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
	s.Messages = []shipping.Reason{{Carrier: "SPEEDSHIP", Message: "does not deliver to ZIP3 968 under profile default"},
		{Carrier: "REGIONALX", Service: "REGSL", Message: "parcel weighs more than 1 lb"}}
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
	if !reflect.DeepEqual(got.ShippingRates, s.ShippingRates) || !reflect.DeepEqual(got.Messages, s.Messages) ||
		got.Origin != s.Origin || got.Parcel != s.Parcel {
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

// A shipment packed before shipments had messages (this value was packed by the code of
// then) reads without them, and renders again without them: GET shows no messages rather than
// an empty list, which would claim every carrier quoted.
func TestPackedShipmentWithoutMessages(t *testing.T) {
	s := &shipping.Shipment{ID: "s1", Status: shipping.StatusOpen}
	rendering, err := unpackShipment(mustHex(t, packedBeforeMessages), s)
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

// messagesOf reads back what renderShipment wrote, by hand in the common shape and by
// encoding/json otherwise (escapes, text beyond ASCII, a message naming a key of the shipment).
func TestMessagesOf(t *testing.T) {
	tests := map[string][]shipping.Reason{
		"stored before messages": nil,
		"every carrier quoted":   {},
		"plain": {{Carrier: "SPEEDSHIP", Message: "does not deliver to ZIP3 968 under profile default"},
			{Carrier: "REGIONALX", Service: "REGSL", Message: "parcel weighs more than 1 lb"}},
		"escaped": {{Carrier: "ACME", Message: `a "quoted" <reason> & é, "messages":[`}, {Carrier: "ACME", Service: "X", Message: `],"created_at":`}},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			s := boughtShipment()
			s.Messages = want
			rendering, err := renderShipment(s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := messagesOf(rendering)
			if err != nil || !reflect.DeepEqual(got, want) || (got == nil) != (want == nil) {
				t.Errorf("messagesOf(%s) = %#v, %v; want %#v", name, got, err, want)
			}
		})
	}
}

// A holed value, filled, reads as the value packed with the filling in place: whole, as its
// rendering alone, and as it was stored the day it was made.
func TestPackHoled(t *testing.T) {
	rendering, req := []byte(`{"id":"s1","tracking_code":,"status":"X"}`), []byte(`{"parcel":{}}`)
	at := bytes.IndexByte(rendering, ',') + len(`,"tracking_code":`)
	want := [][]byte{slices.Concat(rendering[:at], []byte(`"1Z999"`), rendering[at:]), req}
	filled := packHole(at, rendering, req).fill([]byte(`"1Z999"`))
	if got, err := unpack(filled, 2); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("unpack(filled) = %q, %v; want %q", got, err, want)
	}
	if got, err := appendRendering([]byte("x"), filled, 2); err != nil || string(got) != "x"+string(want[0]) {
		t.Errorf("appendRendering(filled) = %q, %v; want x%s", got, err, want[0])
	}
	for _, stored := range []string{holedV2, holedChecked} {
		if got, err := unpack(mustHex(t, stored), 2); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("unpack(%s) = %q, %v; want %q", stored, got, err, want)
		}
	}
	if h := hex.EncodeToString(filled); h != holedChecked {
		t.Logf("packHoled now gives %s (fine if the old value still reads)", h)
	}
	for _, bad := range [][]byte{
		{2},
		{2, 5, 0, 0, 0},        // the hole past its first part, of 0 bytes
		{2, 0, 0x7f, '"'},      // a filling longer than the value
		filled[:len(filled)-3], // cut short
		append([]byte{2, 0, 0xff, 0xff, 0xff, 0x7f}, filled[1:]...), // a filling past maxUnpacked
	} {
		if got, err := unpack(bad, 2); err == nil {
			t.Errorf("unpack(%x) = %q: no error", bad, got)
		}
	}
}

// Holed values as each format version stored them (packV2Holed before checksums; packHoled since).
const (
	holedV2      = "021b0722315a39393922290d07f0040473311dce050fab060858227d7b0d810c047d7d"
	holedChecked = "041b0722315a39393922d8f0e058f7b282df290d07f0040473311dce050fab060858227d7b0d810c047d7d"
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
	purchased(s, s.ShippingRates[4], "lbl_0a1b2c3d4e5f60718293a4b5", "1Z999AA10123456784", at.UnixMicro(), 0, 0)
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
		if _, err := packShipment(rendering, s); err != nil {
			b.Fatal(err)
		}
	}
}
