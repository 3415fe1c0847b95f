package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPackedStaysReadable: packed values are stored for good, so a value packed today (by this
// packDict and format) must unpack to the same bytes in every later build. A change to packDict
// or to lz's format fails here: it needs a new format version, with the old one still read.
func TestPackedStaysReadable(t *testing.T) {
	rendering := []byte(`{"id":"s1","status":"OPEN","shipping_rates":[]}`)
	got, err := AppendRendering(nil, mustHex(t, packedRenderingV5))
	if err != nil || !bytes.Equal(got, rendering) {
		t.Errorf("AppendRendering(%s) = %q, %v; want %q", packedRenderingV5, got, err, rendering)
	}
	if p := hex.EncodeToString(Pack(rendering)); p != packedRenderingV5 {
		t.Logf("pack now gives %s (a change that packs differently is fine if the old value still reads)", p)
	}
}

// A value as format 5 stored it.
const packedRenderingV5 = "05856ff4d52f07f004047331119a06084f50454e199b050c73223a5b5d7d"

// TestPackDictPinned: every format version packs against packDict, so values of all of them
// read only while it stays byte for byte the same. A format with another dictionary needs a new
// version, and this one kept while values of it exist.
func TestPackDictPinned(t *testing.T) {
	const want = "f0960ae2bd4bc1392cea8413eae97a075507566363f75ff5724f81a4f3f3137a"
	if got := fmt.Sprintf("%x", sha256.Sum256([]byte(packDict))); got != want {
		t.Errorf("SHA-256 of packDict = %s; want %s (versions 1 to 4 are packed against it)", got, want)
	}
}

// TestPackedDamage: a value damaged anywhere, by any bit or byte changed, cut short or with a
// byte more, is an error when read, never other bytes (a changed copy distance may name an equal
// run: the same bytes, rightly read). Values of formats 5 and 6 as written now; a bit of the
// version byte changed turns them into formats no longer read. (It once turned 5 into 1 and 6
// into 2, unchecked formats, and served broken JSON.)
func TestPackedDamage(t *testing.T) {
	rendering, code := fixture(t, "bought.json"), []byte(`"1Z999AA10123456784"`)
	at := bytes.Index(rendering, code)
	holed := slices.Concat(rendering[:at], rendering[at+len(code):])
	tests := []struct {
		name    string
		v       []byte
		version byte
	}{
		{"packRendering", Pack(rendering), packRendering},
		{"packRenderHoled", PackHole(at, holed).Fill(code), packRenderHoled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			if v[0] != tt.version {
				t.Fatalf("version %d; want %d", v[0], tt.version)
			}
			if got, err := AppendRendering(nil, v); err != nil || !bytes.Equal(got, rendering) {
				t.Fatalf("AppendRendering = %.40q, %v; want the rendering", got, err)
			}
			for i := range v {
				for _, flip := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff} {
					bad := slices.Clone(v)
					bad[i] ^= flip
					if got, err := AppendRendering(nil, bad); err == nil && !bytes.Equal(got, rendering) {
						t.Errorf("byte %d ^ %#x: AppendRendering = %.40q…, no error", i, flip, got)
					}
				}
				if got, err := AppendRendering(nil, v[:i]); err == nil {
					t.Errorf("cut to %d bytes: AppendRendering = %.40q…, no error", i, got)
				}
			}
			if got, err := AppendRendering(nil, append(slices.Clone(v), 0)); err == nil {
				t.Errorf("a byte more: AppendRendering = %.40q…, no error", got)
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

// A holed value, filled, reads as the rendering packed with the filling in place.
func TestPackHoled(t *testing.T) {
	rendering := []byte(`{"id":"s1","tracking_code":,"status":"X"}`)
	at := bytes.IndexByte(rendering, ',') + len(`,"tracking_code":`)
	want := slices.Concat(rendering[:at], []byte(`"1Z999"`), rendering[at:])
	filled := PackHole(at, rendering).Fill([]byte(`"1Z999"`))
	if got, err := AppendRendering([]byte("x"), filled); err != nil || string(got) != "x"+string(want) {
		t.Errorf("AppendRendering(filled) = %q, %v; want x%s", got, err, want)
	}
	if got, err := AppendRendering(nil, mustHex(t, holedRendering)); err != nil || !bytes.Equal(got, want) {
		t.Errorf("AppendRendering(%s) = %q, %v; want %q", holedRendering, got, err, want)
	}
	if h := hex.EncodeToString(filled); h != holedRendering {
		t.Logf("packRenderHoled now gives %s (fine if the old value still reads)", h)
	}
	for _, bad := range [][]byte{
		{6},
		{6, 5, 0, 0, 0, 0, 0, 0}, // the hole past the rendering, of 0 bytes
		{6, 0, 0x7f, '"'},        // a filling longer than the value
		filled[:len(filled)-3],   // cut short
		append([]byte{6, 0, 0xff, 0xff, 0xff, 0x7f}, filled[1:]...), // a filling past maxUnpacked
		mustHex(t, holedChecked),                                    // format 4, rewritten by the migrations
	} {
		if got, err := AppendRendering(nil, bad); err == nil {
			t.Errorf("AppendRendering(%x) = %q: no error", bad, got)
		}
	}
}

// Holed values as formats 4 (until migration 028, with a request) and 6 (since) stored them.
const (
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
