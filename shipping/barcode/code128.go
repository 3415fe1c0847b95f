// Package barcode encodes Code 128 (ISO/IEC 15417) barcodes as module widths, the form a
// drawing of the bars needs, GS1-128 among them (FNC1).
package barcode

import (
	"errors"
	"fmt"
)

// patterns are the bar/space widths, in modules, of the Code 128 symbol values 0–106; each
// symbol starts with a bar and is 11 modules wide, except the stop symbol (106), 13 wide.
var patterns = [107]string{
	"212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
	"221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
	"221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
	"212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
	"231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
	"231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
	"314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
	"112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
	"111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
	"214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
	"114131", "311141", "411131", "211412", "211214", "211232", "2331112",
}

// FNC1 stands for the function character FNC1 in the text Encode and Modules take and Decode
// returns. First in the text, right after the start symbol, it makes the symbol GS1-128 (a
// scanner reports the GS1 modifier); later, it ends a variable-length GS1 element string (a
// scanner reports it as GS, 0x1D). The byte 0xF1 is not printable ASCII, so it stands for
// nothing else.
const FNC1 = "\xf1"

// Symbol values with a special meaning.
const (
	fnc1   = 102 // FNC1, in every code set
	codeC  = 99  // switch to code set C (in B)
	codeB  = 100 // switch to code set B (in C)
	codeA  = 101 // switch to code set A (in B and C)
	startA = 103
	startB = 104
	startC = 105
	stop   = 106
)

// QuietZone is the blank margin, in modules, a reader needs on each side of the bars.
const QuietZone = 10

// Encode returns the Code 128 symbol values for s, start and check symbols included, stop
// excluded. s must be printable ASCII (space to DEL), and FNC1. Digit runs use code set C (two
// digits a symbol) where that makes the code shorter; everything else uses code set B. FNC1 is
// the same symbol in every code set, so a digit run that ends at one ends as at the end of s.
func Encode(s string) ([]int, error) {
	if s == "" {
		return nil, errors.New("barcode: empty text")
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < 32 || s[i] > 127) && s[i] != FNC1[0] {
			return nil, fmt.Errorf("barcode: byte %#x at %d is not printable ASCII", s[i], i)
		}
	}
	digits := func(i int) int { // the length of the digit run starting at i
		n := 0
		for i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '9' {
			n++
		}
		return n
	}
	ends := func(i int) bool { return i == len(s) || s[i] == FNC1[0] }
	first := 0
	for first < len(s) && s[first] == FNC1[0] {
		first++
	}
	var vals []int
	set := startB
	if n := digits(first); n >= 4 || n >= 2 && n%2 == 0 && ends(first+n) {
		set = startC
	}
	vals = append(vals, set)
	for i := 0; i < len(s); {
		if s[i] == FNC1[0] {
			vals = append(vals, fnc1)
			i++
			continue
		}
		if set == startC {
			if digits(i) >= 2 {
				vals = append(vals, int(s[i]-'0')*10+int(s[i+1]-'0'))
				i += 2
				continue
			}
			vals, set = append(vals, codeB), startB
		}
		// In set B a run of digits is worth switching for when it is long enough to pay for
		// the switch: 4 digits ending the text (or at an FNC1), else 6. An odd run keeps its
		// first digit in B.
		if n := digits(i); n >= 6 || n >= 4 && ends(i+n) {
			if n%2 == 1 {
				vals = append(vals, int(s[i])-32)
				i++
			}
			vals, set = append(vals, codeC), startC
			continue
		}
		vals = append(vals, int(s[i])-32)
		i++
	}
	return append(vals, checksum(vals)), nil
}

// checksum is the check symbol of start and data symbol values.
func checksum(vals []int) int {
	sum := vals[0]
	for i, v := range vals[1:] {
		sum += (i + 1) * v
	}
	return sum % 103
}

// Modules returns the bar and space widths of s's barcode, in modules, starting with a bar and
// ending with the stop pattern's final bar; quiet zones are not included.
func Modules(s string) ([]int, error) {
	vals, err := Encode(s)
	if err != nil {
		return nil, err
	}
	widths := make([]int, 0, 6*len(vals)+7)
	for _, v := range append(vals, stop) {
		for _, c := range patterns[v] {
			widths = append(widths, int(c-'0'))
		}
	}
	return widths, nil
}
