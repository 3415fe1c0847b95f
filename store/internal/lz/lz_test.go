package lz

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

var dict = NewDict([]byte(`{"id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"}}`))

func TestRoundTrip(t *testing.T) {
	quote := `{"id":"01a21416-de29-7c7f-8ea9-0a835137b1a7","carrier":"POSTLINE","service":"GROUND","price":{"amount":9.47,"currency":"USD"}}`
	for _, src := range []string{
		"",
		"a",
		"short",
		quote,
		strings.Repeat(quote+",", 9),
		strings.Repeat("a", 1000), // a copy overlapping what it writes
		"\x00\x01\xff\xfe binary \x80",
	} {
		p := dict.Pack(nil, []byte(src))
		got, err := dict.Unpack([]byte("prefix"), p, len(src)+10)
		if err != nil || string(got) != "prefix"+src {
			t.Errorf("Unpack(Pack(%.40q)) = %.40q, %v; want the input back", src, got, err)
		}
		if len(src) > 500 && len(p) > len(src)/4 {
			t.Errorf("Pack(%.40q) is %d bytes of %d; want at most a quarter", src, len(p), len(src))
		}
		for _, limit := range []int{0, 1, 7, len(src) / 2} {
			got, err := dict.Unpack(nil, p, limit)
			if want := src[:min(limit, len(src))]; err != nil || string(got) != want {
				t.Errorf("Unpack(Pack(%.40q), %d) = %.40q, %v; want %.40q", src, limit, got, err, want)
			}
		}
	}
}

func TestDictionaryMatters(t *testing.T) {
	src := []byte(`{"id":"x","carrier":"y","service":"z","price":{"amount":1,"currency":"USD"}}`)
	if with, without := len(dict.Pack(nil, src)), len(NewDict(nil).Pack(nil, src)); with >= without/2 {
		t.Errorf("packed against the dictionary: %d bytes; without: %d; want less than half", with, without)
	}
}

func TestCorrupt(t *testing.T) {
	for _, src := range [][]byte{
		{0x80},          // a uvarint cut short
		{10, 'a'},       // 5 literal bytes promised, 1 given
		{1},             // a copy without its distance
		{1, 0},          // distance 0
		{1, 0xff, 0x7f}, // distance past the dictionary's start
		{3, 0x80},       // a distance cut short
	} {
		if got, err := dict.Unpack(nil, src, 1<<20); err != ErrCorrupt {
			t.Errorf("Unpack(%x) = %q, %v; want ErrCorrupt", src, got, err)
		}
	}
}

// TestUnpackAll holds whole reads to the form's end: cut short, followed by a byte, or unpacking
// to more or less than said, a form is ErrCorrupt.
func TestUnpackAll(t *testing.T) {
	src := []byte(`{"id":"0190a1b2","carrier":"POSTLINE","service":"GROUND","carrier":"POSTLINE"}`)
	packed := dict.Pack(nil, src)
	if got, err := dict.UnpackAll(nil, packed, len(src)); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("UnpackAll(Pack(%q)) = %q, %v", src, got, err)
	}
	for _, c := range []struct {
		name   string
		packed []byte
		n      int
	}{
		{"a byte after the end", append(slices.Clone(packed), 0), len(src)},
		{"more than said", packed, len(src) - 1},
		{"less than said", packed, len(src) + 1},
	} {
		if got, err := dict.UnpackAll(nil, c.packed, c.n); err != ErrCorrupt {
			t.Errorf("%s: UnpackAll = %q, %v; want ErrCorrupt", c.name, got, err)
		}
	}
	for i := range packed {
		if got, err := dict.UnpackAll(nil, packed[:i], len(src)); err != ErrCorrupt {
			t.Errorf("UnpackAll(the first %d bytes) = %q, %v; want ErrCorrupt", i, got, err)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`{"id":"","carrier":"POSTLINE"}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := dict.Unpack(nil, dict.Pack(nil, src), len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("Unpack(Pack(%q)) = %q, %v", src, got, err)
		}
		if got, err := dict.UnpackAll(nil, dict.Pack(nil, src), len(src)); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("UnpackAll(Pack(%q)) = %q, %v", src, got, err)
		}
		// Any input unpacks or is refused, within its limit.
		if out, err := dict.Unpack(nil, src, 1000); err == nil && len(out) > 1000 {
			t.Fatalf("Unpack(%q, 1000) gave %d bytes", src, len(out))
		}
	})
}
