package barcode

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// TestPatterns checks the symbol table's invariants: every pattern is 11 modules (the stop
// 13), its bars cover an even number of modules, and no two patterns are alike.
func TestPatterns(t *testing.T) {
	seen := map[string]int{}
	for v, p := range patterns {
		sum, bars := 0, 0
		for i, c := range p {
			sum += int(c - '0')
			if i%2 == 0 {
				bars += int(c - '0')
			}
		}
		want := 11
		if v == stop {
			want = 13
		}
		if sum != want {
			t.Errorf("pattern %d (%s) is %d modules; want %d", v, p, sum, want)
		}
		if bars%2 != 0 {
			t.Errorf("pattern %d (%s) has %d bar modules; want an even number", v, p, bars)
		}
		if w, dup := seen[p]; dup {
			t.Errorf("patterns %d and %d are both %s", w, v, p)
		}
		seen[p] = v
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		// The textbook example: Start B, P J J 1 2 3 C, check (879 mod 103 = 55).
		{"PJJ123C", []int{startB, 48, 42, 42, 17, 18, 19, 35, 55}},
		// All digits, even: code set C throughout. Check: 105 + 12 + 2*34 = 185 mod 103 = 82.
		{"1234", []int{startC, 12, 34, 82}},
		// Odd digit run at the end of length 5: one digit in B, then C.
		{"AB12345", []int{startB, 33, 34, 17, codeC, 23, 45, (104 + 33 + 2*34 + 3*17 + 4*99 + 5*23 + 6*45) % 103}},
		// Two digits alone: C. Three digits: B (switching would not pay).
		{"42", []int{startC, 42, (105 + 42) % 103}},
		{"123", []int{startB, 17, 18, 19, (104 + 17 + 2*18 + 3*19) % 103}},
		// Leading digits then letters: start C, switch to B.
		{"1234AB", []int{startC, 12, 34, codeB, 33, 34, (105 + 12 + 2*34 + 3*100 + 4*33 + 5*34) % 103}},
		// GS1-128 of a USPS IMpb with its routing code (Publication 199): start C, FNC1, 420 and
		// the ZIP, FNC1, the tracking number, all in code set C.
		{FNC1 + "42078701" + FNC1 + "9261292700768711948021",
			[]int{startC, fnc1, 42, 7, 87, 1, fnc1, 92, 61, 29, 27, 0, 76, 87, 11, 94, 80, 21, 47}},
		{FNC1 + "420787011234" + FNC1 + "9261292700768711948021",
			[]int{startC, fnc1, 42, 7, 87, 1, 12, 34, fnc1, 92, 61, 29, 27, 0, 76, 87, 11, 94, 80, 21, 69}},
		// FNC1 is the same symbol in code set B; a digit run ending at one may use set C.
		{FNC1 + "ABC", []int{startB, fnc1, 33, 34, 35, (104 + 102 + 2*33 + 3*34 + 4*35) % 103}},
		{FNC1 + "1234" + FNC1 + "A", []int{startC, fnc1, 12, 34, fnc1, codeB, 33, (105 + 102 + 2*12 + 3*34 + 4*102 + 5*100 + 6*33) % 103}},
	}
	for _, tt := range tests {
		got, err := Encode(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, s := range []string{"", "tab\there", "café", "\xf0", "GS\x1dseparator"} {
		if got, err := Encode(s); err == nil {
			t.Errorf("Encode(%q) = %v, nil; want an error", s, got)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{
		"PJJ123C", "1Z999AA10123456784", "WBAX00000000000123456789", "9400111899223344556677",
		"a", "00", "000", "Hello, World! ~{}|", "12ab34cd5678ef", "X1234567Y12",
		FNC1 + "42078701" + FNC1 + "9261292700768711948021", FNC1, FNC1 + FNC1, "AB" + FNC1 + "123", FNC1 + "1" + FNC1 + "23",
	} {
		m, err := Modules(s)
		if err != nil {
			t.Fatalf("Modules(%q): %v", s, err)
		}
		if m[0] != 2 || len(m)%6 != 1 {
			t.Errorf("Modules(%q) has %d widths starting %v; want a start symbol and 6 per symbol + 7", s, len(m), m[:6])
		}
		got, err := Decode(m)
		if err != nil || got != s {
			t.Errorf("Decode(Modules(%q)) = %q, %v; want %q", s, got, err, s)
		}
	}
}

func TestCodeSetCIsShorter(t *testing.T) {
	b, _ := Encode("WB" + "12345678901234567890")
	if len(b) > 2+1+10+1+1+1 { // start, W, B, switch, 10 pairs, check (+1 slack)
		t.Errorf("Encode of a long digit run used %d symbols; want code set C", len(b))
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := Modules("PJJ123C")
	badCheck := slices.Clone(good)
	// Swap symbol 2 (J) for symbol value 43 (a different letter) keeping the widths valid.
	copy(badCheck[12:18], []int{1, 1, 2, 3, 3, 1})
	tests := map[string][]int{
		"short":     good[:10],
		"no stop":   append(slices.Clone(good[:len(good)-7]), 1, 1, 1, 1, 1, 1, 1),
		"bad check": badCheck,
		"bad width": append([]int{2, 1, 1, 2, 1, 9}, good[6:]...),
	}
	for name, m := range tests {
		if got, err := Decode(m); err == nil {
			t.Errorf("Decode(%s) = %q, nil; want an error", name, got)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add("PJJ123C")
	f.Add("0123456789")
	f.Add(FNC1 + "42078701" + FNC1 + "9261292700768711948021")
	f.Add("AB" + FNC1 + "12345" + FNC1)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Modules(s)
		if err != nil {
			return
		}
		got, err := Decode(m)
		if err != nil || got != s {
			t.Errorf("Decode(Modules(%q)) = %q, %v", s, got, err)
		}
	})
}

// Decode reads the text back from bar and space widths in modules (as Modules returns them),
// checking the start, check and stop symbols: a reader written apart from Encode, so that the
// round trips check the encoder. It reads code sets B and C, A for its printable characters,
// and FNC1 (as FNC1) in any of them.
func Decode(widths []int) (string, error) {
	if len(widths) < 6*3+7 || (len(widths)-7)%6 != 0 {
		return "", fmt.Errorf("barcode: %d bars and spaces do not make a Code 128 symbol", len(widths))
	}
	var tail strings.Builder
	for _, w := range widths[len(widths)-7:] {
		tail.WriteByte(byte('0' + w))
	}
	if tail.String() != patterns[stop] {
		return "", errors.New("barcode: no stop pattern")
	}
	var vals []int
	for i := 0; i+7 < len(widths); i += 6 {
		var p strings.Builder
		for _, w := range widths[i : i+6] {
			if w < 1 || w > 4 {
				return "", fmt.Errorf("barcode: width %d in symbol %d", w, len(vals))
			}
			p.WriteByte(byte('0' + w))
		}
		v, ok := lookup[p.String()]
		if !ok {
			return "", fmt.Errorf("barcode: unknown pattern %s in symbol %d", p.String(), len(vals))
		}
		vals = append(vals, v)
	}
	if check := vals[len(vals)-1]; checksum(vals[:len(vals)-1]) != check {
		return "", errors.New("barcode: check symbol does not match")
	}
	vals = vals[:len(vals)-1]
	set := vals[0]
	if set < startA || set > startC {
		return "", errors.New("barcode: no start symbol")
	}
	var out strings.Builder
	for _, v := range vals[1:] {
		switch {
		case v == fnc1:
			out.WriteString(FNC1)
		case set == startC && v < 100:
			fmt.Fprintf(&out, "%02d", v)
		case set != startC && v < 96:
			if set == startA && v >= 64 {
				return "", errors.New("barcode: control characters are not supported")
			}
			out.WriteByte(byte(v + 32))
		case v == codeC && set != startC:
			set = startC
		case v == codeB && set != startB:
			set = startB
		case v == codeA && set != startA:
			set = startA
		default:
			return "", fmt.Errorf("barcode: symbol %d is not supported", v)
		}
	}
	return out.String(), nil
}

// lookup maps a data, start or check symbol's pattern to its value.
var lookup = func() map[string]int {
	m := make(map[string]int, len(patterns))
	for v, p := range patterns[:stop] {
		m[p] = v
	}
	return m
}()
