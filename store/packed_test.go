package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
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
	got, err := unpack(mustHex(t, packedRenderingV5), 3)
	if err != nil || !reflect.DeepEqual(got, parts[:1]) {
		t.Errorf("unpack(%s) = %q, %v; want %q", packedRenderingV5, got, err, parts[:1])
	}
	if p := hex.EncodeToString(pack(parts[0])); p != packedRenderingV5 {
		t.Logf("pack now gives %s (a change that packs differently is fine if the old value still reads)", p)
	}
}

// Values as each format version stored them (packV1 before checksums; packChecked until
// migration 028, three parts; packRendering since, the rendering alone).
const (
	packedV1          = "012f0d0207f004047331119a06084f50454e199b050e73223a5b5d7d7b0d870c087d7d0204"
	packedChecked     = "03856ff4d5a4ea677c2f0d0207f004047331119a06084f50454e199b050e73223a5b5d7d7b0d870c087d7d0204"
	packedRenderingV5 = "05856ff4d52f07f004047331119a06084f50454e199b050c73223a5b5d7d"
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
// or the very rendering packed (a byte of the other parts changed goes unread there). Values
// of formats 3 and 4 as stored before migration 028, and of 5 and 6 as written now.
func TestPackedDamage(t *testing.T) {
	rendering, err := renderShipment(boughtShipment())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := markedAt(bytes.Replace(rendering, []byte(`"1Z999AA10123456784"`), trackingCodeMarkJSON, 1))
	tests := []struct {
		name      string
		v         []byte
		version   byte
		rendering []byte
	}{
		{"packChecked", fixture(t, "open_v3.hex"), packChecked, fixture(t, "open.json")},
		{"packHoled", fixture(t, "bought_v4.hex"), packHoled, fixture(t, "bought.json")},
		{"packRendering", pack(rendering), packRendering, rendering},
		{"packRenderHoled", packHole(len(m.before), m.join()).fill([]byte(`"1Z999AA10123456784"`)), packRenderHoled, rendering},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			if v[0] != tt.version {
				t.Fatalf("version %d; want %d", v[0], tt.version)
			}
			want, err := unpack(v, 3)
			if err != nil || !bytes.Equal(want[0], tt.rendering) {
				t.Fatalf("unpack = %.40q, %v; want the rendering", want, err)
			}
			for i := range v {
				for _, flip := range []byte{0x01, 0x80, 0xff} {
					bad := slices.Clone(v)
					bad[i] ^= flip
					if got, err := unpack(bad, 3); err == nil {
						t.Errorf("byte %d ^ %#x: unpack = %.40q…, no error", i, flip, got)
					}
					if got, err := appendRendering(nil, bad, 3); err == nil && !bytes.Equal(got, tt.rendering) {
						t.Errorf("byte %d ^ %#x: appendRendering = %.40q…, no error", i, flip, got)
					}
				}
				if got, err := unpack(v[:i], 3); err == nil {
					t.Errorf("cut to %d bytes: unpack = %.40q…, no error", i, got)
				}
			}
			if got, err := unpack(append(slices.Clone(v), 0), 3); err == nil {
				t.Errorf("a byte more: unpack = %.40q…, no error", got)
			}
		})
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
	if r, err := appendRendering([]byte("x"), packed, 3); err != nil || string(r) != "x"+string(fixture(t, "open.json")) {
		t.Errorf("appendRendering = %.40q…, %v; want the rendering after x", r, err)
	}
	for _, bad := range [][]byte{nil, {2}, packed[:len(packed)/2], append([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, packed[1:]...),
		pack(r)} {
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

// A holed value, filled, reads as the rendering packed with the filling in place: whole, as
// its rendering alone, and as values of formats 2 and 4 were stored with a request beside.
func TestPackHoled(t *testing.T) {
	rendering, req := []byte(`{"id":"s1","tracking_code":,"status":"X"}`), []byte(`{"parcel":{}}`)
	at := bytes.IndexByte(rendering, ',') + len(`,"tracking_code":`)
	want := slices.Concat(rendering[:at], []byte(`"1Z999"`), rendering[at:])
	filled := packHole(at, rendering).fill([]byte(`"1Z999"`))
	if got, err := unpack(filled, 2); err != nil || !reflect.DeepEqual(got, [][]byte{want}) {
		t.Errorf("unpack(filled) = %q, %v; want %q", got, err, want)
	}
	if got, err := appendRendering([]byte("x"), filled, 2); err != nil || string(got) != "x"+string(want) {
		t.Errorf("appendRendering(filled) = %q, %v; want x%s", got, err, want)
	}
	for _, stored := range []string{holedV2, holedChecked} {
		if got, err := unpack(mustHex(t, stored), 2); err != nil || !reflect.DeepEqual(got, [][]byte{want, req}) {
			t.Errorf("unpack(%s) = %q, %v; want %q", stored, got, err, [][]byte{want, req})
		}
	}
	if got, err := unpack(mustHex(t, holedRendering), 2); err != nil || !reflect.DeepEqual(got, [][]byte{want}) {
		t.Errorf("unpack(%s) = %q, %v; want %q", holedRendering, got, err, want)
	}
	if h := hex.EncodeToString(filled); h != holedRendering {
		t.Logf("packRenderHoled now gives %s (fine if the old value still reads)", h)
	}
	for _, bad := range [][]byte{
		{2},
		{6},
		{2, 5, 0, 0, 0},          // the hole past its first part, of 0 bytes
		{6, 5, 0, 0, 0, 0, 0, 0}, // the same, in format 6
		{2, 0, 0x7f, '"'},        // a filling longer than the value
		filled[:len(filled)-3],   // cut short
		append([]byte{6, 0, 0xff, 0xff, 0xff, 0x7f}, filled[1:]...), // a filling past maxUnpacked
	} {
		if got, err := unpack(bad, 2); err == nil {
			t.Errorf("unpack(%x) = %q: no error", bad, got)
		}
	}
}

// Holed values as each format version stored them (packV2Holed before checksums; packHoled
// until migration 028, with a request; packRenderHoled since).
const (
	holedV2        = "021b0722315a39393922290d07f0040473311dce050fab060858227d7b0d810c047d7d"
	holedChecked   = "041b0722315a39393922d8f0e058f7b282df290d07f0040473311dce050fab060858227d7b0d810c047d7d"
	holedRendering = "061b0722315a39393922d8f0e0582907f0040473311dce050fab060658227d"
)

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
		pack(rendering)
	}
}
