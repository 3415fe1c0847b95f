package carrier

import (
	"slices"
	"strconv"

	"github.com/waybill/waybill/shipping"
)

// zipSet is a set of ZIP5s compiled for quoting: the ZIPs as sorted numbers, 4 bytes a ZIP
// where a map of strings takes about 50, so that 20,000 DAS ZIPs of each of 20 carriers stay
// small.
type zipSet []uint32

// newZipSet compiles valid ZIP5s.
func newZipSet(zips []string) zipSet {
	s := make(zipSet, 0, len(zips))
	for _, z := range zips {
		if n, ok := zip5Number(z); ok {
			s = append(s, n)
		}
	}
	slices.Sort(s)
	return slices.Clip(slices.Compact(s))
}

// has reports whether the set holds zip's first five digits.
func (s zipSet) has(zip string) bool {
	if len(zip) < 5 {
		return false
	}
	n, ok := zip5Number(zip[:5])
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s, n)
	return found
}

func zip5Number(z string) (uint32, bool) {
	if len(z) != 5 || digitCount(z) != 5 {
		return 0, false
	}
	n, _ := strconv.Atoi(z)
	return uint32(n), true
}

// checkDuplicateZips records, under field, every entry of zips that repeats an earlier one.
func checkDuplicateZips(v *shipping.ValidationError, field string, zips []string) {
	first := make(map[uint32]int, len(zips))
	for i, z := range zips {
		n, ok := zip5Number(z)
		if !ok {
			continue // reported as invalid
		}
		if j, dup := first[n]; dup {
			v.Add(field+"["+strconv.Itoa(i)+"]", "duplicate", "repeats "+field+"["+strconv.Itoa(j)+"]")
			continue
		}
		first[n] = i
	}
}
