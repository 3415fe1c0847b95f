package shipping

import (
	_ "embed"
	"math"
	"strconv"
	"strings"
)

//go:generate go run ./internal/zipgen -o zip3.tsv -license zip3.LICENSE

// zip3Data is derived from the npm package zipcodes (BSD; see zip3.LICENSE).
//
//go:embed zip3.tsv
var zip3Data string

// zip3Info is one ZIP3 area: the centroid of its ZIP codes and the states they lie in.
type zip3Info struct {
	ok       bool
	lat, lon float64 // radians
	states   string  // comma-separated, most ZIP codes first
}

// zip3s is indexed by the ZIP3's number.
var zip3s = parseZip3(zip3Data)

func parseZip3(data string) *[1000]zip3Info {
	var t [1000]zip3Info
	for _, line := range strings.Split(data, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		n, err1 := strconv.Atoi(f[0])
		lat, err2 := strconv.ParseFloat(f[1], 64)
		lon, err3 := strconv.ParseFloat(f[2], 64)
		if len(f) != 4 || err1 != nil || err2 != nil || err3 != nil || n < 0 || n > 999 {
			panic("shipping: bad zip3.tsv line " + line)
		}
		t[n] = zip3Info{ok: true, lat: lat * math.Pi / 180, lon: lon * math.Pi / 180, states: f[3]}
	}
	return &t
}

// ZIP3Number returns the number of a ZIP code's first three digits, or -1 when zip does not start
// with three digits.
func ZIP3Number(zip string) int {
	if len(zip) < 3 {
		return -1
	}
	n := 0
	for i := 0; i < 3; i++ {
		c := zip[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// KnownZIP reports whether zip (five digits, optionally followed by -NNNN) lies in a ZIP3 area
// of the table.
func KnownZIP(zip string) bool {
	if !ValidZIPFormat(zip) {
		return false
	}
	return zip3s[ZIP3Number(zip)].ok
}

// ZIPInState reports whether zip's ZIP3 area has ZIP codes in state (two-letter code).
func ZIPInState(zip, state string) bool {
	if !ValidZIPFormat(zip) {
		return false
	}
	i := ZIP3Number(zip)
	if i < 0 || !zip3s[i].ok || len(state) != 2 {
		return false
	}
	for _, s := range strings.Split(zip3s[i].states, ",") {
		if s == state {
			return true
		}
	}
	return false
}

// ValidZIPFormat reports whether zip is written as a US ZIP code: five digits, or ZIP+4
// (12345-6789).
func ValidZIPFormat(zip string) bool {
	if len(zip) != 5 && len(zip) != 10 {
		return false
	}
	for i := 0; i < len(zip); i++ {
		c := zip[i]
		if i == 5 {
			if c != '-' {
				return false
			}
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// earthRadiusMiles is the mean radius of the Earth.
const earthRadiusMiles = 3958.8

// ZIP3Distance is the great-circle distance in miles between two ZIP3 centroids; ok is false
// when either is unknown.
func ZIP3Distance(a, b int) (miles float64, ok bool) {
	if a < 0 || b < 0 || a > 999 || b > 999 || !zip3s[a].ok || !zip3s[b].ok {
		return 0, false
	}
	if a == b {
		return 0, true
	}
	p, q := zip3s[a], zip3s[b]
	// Haversine: well conditioned for short distances.
	dlat, dlon := q.lat-p.lat, q.lon-p.lon
	h := math.Sin(dlat/2)*math.Sin(dlat/2) + math.Cos(p.lat)*math.Cos(q.lat)*math.Sin(dlon/2)*math.Sin(dlon/2)
	return 2 * earthRadiusMiles * math.Asin(math.Min(1, math.Sqrt(h))), true
}

// ZoneForDistance maps a distance in miles to its USPS distance zone (1 to 8).
func ZoneForDistance(miles float64) int {
	for i, limit := range [...]float64{50, 150, 300, 600, 1000, 1400, 1800} {
		if miles <= limit {
			return i + 1
		}
	}
	return 8
}

// ParseZIP3Range parses "900" or "900-935" (both ends three digits, lo ≤ hi).
func ParseZIP3Range(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	if len(a) != 3 || len(b) != 3 {
		return 0, 0, false
	}
	lo, hi = ZIP3Number(a), ZIP3Number(b)
	if lo < 0 || hi < 0 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}
