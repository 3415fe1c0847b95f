package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
)

// TestPackedStaysReadable: packed values are stored for good, so a value packed today (by this
// packDict and format) must unpack to the same bytes in every later build. A change to packDict
// or to lz's format fails here: it needs a new format version, with the old one still read.
func TestPackedStaysReadable(t *testing.T) {
	parts := [][]byte{[]byte(`{"id":"s1","status":"OPEN","shipping_rates":[]}`), []byte(`{"parcel":{}}`), {0x02, 0x04}}
	for _, stored := range []string{packedV1, packedChecked} {
		got, err := Unpack(mustHex(t, stored), 3)
		if err != nil || !reflect.DeepEqual(got, parts) {
			t.Errorf("Unpack(%s) = %q, %v; want %q", stored, got, err, parts)
		}
	}
	got, err := Unpack(mustHex(t, packedRenderingV5), 3)
	if err != nil || !reflect.DeepEqual(got, parts[:1]) {
		t.Errorf("Unpack(%s) = %q, %v; want %q", packedRenderingV5, got, err, parts[:1])
	}
	if p := hex.EncodeToString(Pack(parts[0])); p != packedRenderingV5 {
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

// Values of the unchecked versions 1 and 2 are read whole (by migrations, which rewrite them),
// and refused as a rendering alone: none is stored after migration 037.
func TestUncheckedRefusedAsRendering(t *testing.T) {
	for stored, parts := range map[string]int{packedV1: 3, holedV2: 2} {
		v := mustHex(t, stored)
		if _, err := Unpack(v, parts); err != nil {
			t.Errorf("Unpack(%s): %v", stored, err)
		}
		if got, err := AppendRendering(nil, v, parts); !errors.Is(err, ErrUnchecked) {
			t.Errorf("AppendRendering(%s) = %q, %v; want ErrUnchecked", stored, got, err)
		}
	}
	// Bit 0x04 of the version byte turns the versions written today into unchecked ones. Read
	// so, a value's CRC is taken for lengths, which fit half the time (renderings of 64 lengths).
	bought := fixture(t, "bought.json")
	for n := len(bought) - 64; n < len(bought); n++ {
		rendering := bought[:n:n]
		for _, v := range [][]byte{Pack(rendering), PackHole(10, rendering[:10:10]).Fill(rendering[10:])} {
			v[0] ^= 0x04
			for _, parts := range []int{1, 3} {
				if got, err := AppendRendering(nil, v, parts); err == nil {
					t.Fatalf("version %d, %d parts: AppendRendering = %.40q…, no error", v[0], parts, got)
				}
			}
		}
	}
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

// TestPackedDamage: a checked value damaged anywhere, by any bit or byte changed, cut short or
// with a byte more, is an error when read whole, never other bytes; its rendering alone is an
// error or the very rendering packed (a byte of the other parts changed goes unread there), and
// with a byte more an error too where the rendering is the value's one part. Values of formats
// 3 and 4 as stored before migration 028, and of 5 and 6 as written now. (A bit of the version
// byte changed once turned 5 into 1 and 6 into 2, unchecked formats, and served broken JSON.)
func TestPackedDamage(t *testing.T) {
	rendering, code := fixture(t, "bought.json"), []byte(`"1Z999AA10123456784"`)
	at := bytes.Index(rendering, code)
	holed := slices.Concat(rendering[:at], rendering[at+len(code):])
	tests := []struct {
		name      string
		v         []byte
		version   byte
		rendering []byte
	}{
		{"packChecked", fixture(t, "open_v3.hex"), packChecked, fixture(t, "open.json")},
		{"packHoled", fixture(t, "bought_v4.hex"), packHoled, fixture(t, "bought.json")},
		{"packRendering", Pack(rendering), packRendering, rendering},
		{"packRenderHoled", PackHole(at, holed).Fill(code), packRenderHoled, rendering},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			if v[0] != tt.version {
				t.Fatalf("version %d; want %d", v[0], tt.version)
			}
			want, err := Unpack(v, 3)
			if err != nil || !bytes.Equal(want[0], tt.rendering) {
				t.Fatalf("unpack = %.40q, %v; want the rendering", want, err)
			}
			for i := range v {
				for _, flip := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff} {
					bad := slices.Clone(v)
					bad[i] ^= flip
					// A changed copy distance may name an equal run: the same bytes, rightly read.
					if got, err := Unpack(bad, 3); err == nil && !reflect.DeepEqual(got, want) {
						t.Errorf("byte %d ^ %#x: unpack = %.40q…, no error", i, flip, got)
					}
					if got, err := AppendRendering(nil, bad, 3); err == nil && !bytes.Equal(got, tt.rendering) {
						t.Errorf("byte %d ^ %#x: appendRendering = %.40q…, no error", i, flip, got)
					}
				}
				if got, err := Unpack(v[:i], 3); err == nil {
					t.Errorf("cut to %d bytes: unpack = %.40q…, no error", i, got)
				}
			}
			if got, err := Unpack(append(slices.Clone(v), 0), 3); err == nil {
				t.Errorf("a byte more: Unpack = %.40q…, no error", got)
			}
			if tt.version >= packRendering {
				if got, err := AppendRendering(nil, append(slices.Clone(v), 0), 3); err == nil {
					t.Errorf("a byte more: AppendRendering = %.40q…, no error", got)
				}
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

// A holed value, filled, reads as the rendering packed with the filling in place: whole, as
// its rendering alone, and as values of formats 2 and 4 were stored with a request beside.
func TestPackHoled(t *testing.T) {
	rendering, req := []byte(`{"id":"s1","tracking_code":,"status":"X"}`), []byte(`{"parcel":{}}`)
	at := bytes.IndexByte(rendering, ',') + len(`,"tracking_code":`)
	want := slices.Concat(rendering[:at], []byte(`"1Z999"`), rendering[at:])
	filled := PackHole(at, rendering).Fill([]byte(`"1Z999"`))
	if got, err := Unpack(filled, 2); err != nil || !reflect.DeepEqual(got, [][]byte{want}) {
		t.Errorf("Unpack(filled) = %q, %v; want %q", got, err, want)
	}
	if got, err := AppendRendering([]byte("x"), filled, 2); err != nil || string(got) != "x"+string(want) {
		t.Errorf("AppendRendering(filled) = %q, %v; want x%s", got, err, want)
	}
	for _, stored := range []string{holedV2, holedChecked} {
		if got, err := Unpack(mustHex(t, stored), 2); err != nil || !reflect.DeepEqual(got, [][]byte{want, req}) {
			t.Errorf("Unpack(%s) = %q, %v; want %q", stored, got, err, [][]byte{want, req})
		}
	}
	if got, err := Unpack(mustHex(t, holedRendering), 2); err != nil || !reflect.DeepEqual(got, [][]byte{want}) {
		t.Errorf("Unpack(%s) = %q, %v; want %q", holedRendering, got, err, want)
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
		if got, err := Unpack(bad, 2); err == nil {
			t.Errorf("Unpack(%x) = %q: no error", bad, got)
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

// fixture reads a file of the store suite's testdata (store/storetest/testdata): packed values
// and renderings as the code before migration 028 stored them for a shipment with nine quotes,
// bought (bought_v4.hex, its tracking code filled in a hole; bought.json), and OPEN
// (open_v3.hex, open.json).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "storetest", "testdata", name))
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

// MessagesOf reads back what a shipment's rendering holds, by hand in the common shape and by
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
			var s shipping.Shipment
			if err := json.Unmarshal(fixture(t, "bought.json"), &s); err != nil {
				t.Fatal(err)
			}
			s.Messages = want
			rendering, err := json.Marshal(&s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MessagesOf(rendering)
			if err != nil || !reflect.DeepEqual(got, want) || (got == nil) != (want == nil) {
				t.Errorf("MessagesOf(%s) = %#v, %v; want %#v", name, got, err, want)
			}
		})
	}
}
