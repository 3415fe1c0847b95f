package store

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping"
)

// decodeRateMetadata reads a shipping_rates.rate_metadata value. Lists read hundreds of them per
// page, so the exact shape CreateShipment writes is parsed by hand; anything else falls back
// to encoding/json.
func decodeRateMetadata(s string, m *shipping.RateMetadata) error {
	if fastRateMetadata(s, m) {
		return nil
	}
	*m = shipping.RateMetadata{}
	return json.Unmarshal([]byte(s), m)
}

// fastRateMetadata parses {"zone":N,"billable_weight_oz":N,"surcharges":[{"type":"T","amount":F},…]}
// and reports whether s had exactly that shape.
func fastRateMetadata(s string, m *shipping.RateMetadata) bool {
	take := func(prefix string) bool {
		if !strings.HasPrefix(s, prefix) {
			return false
		}
		s = s[len(prefix):]
		return true
	}
	// until returns the text before the first of stops, leaving s at that byte.
	until := func(stops string) (string, bool) {
		i := strings.IndexAny(s, stops)
		if i <= 0 {
			return "", false
		}
		v := s[:i]
		s = s[i:]
		return v, true
	}
	if !take(`{"zone":`) {
		return false
	}
	v, ok := until(",")
	zone, err := strconv.Atoi(v)
	if !ok || err != nil || !jsonInt(v) || !take(`,"billable_weight_oz":`) {
		return false
	}
	v, ok = until(",")
	weight, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || !jsonInt(v) || !take(`,"surcharges":[`) {
		return false
	}
	surcharges := []shipping.SurchargeAmount{}
	for !take("]") {
		if len(surcharges) > 0 && !take(",") {
			return false
		}
		if !take(`{"type":"`) {
			return false
		}
		typ, ok := until(`"\`)
		if !ok || !plainASCII(typ) || !take(`","amount":`) {
			return false
		}
		v, ok = until("}")
		amount, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || !jsonNumber(v) || !take("}") {
			return false
		}
		surcharges = append(surcharges, shipping.SurchargeAmount{Type: typ, Amount: amount})
	}
	if s != "}" {
		return false
	}
	*m = shipping.RateMetadata{Zone: zone, BillableWeightOz: weight, Surcharges: surcharges}
	return true
}

// jsonInt reports whether s is a JSON integer: -?(0|[1-9][0-9]*).
func jsonInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && digits(s) == len(s) && (s == "0" || s[0] != '0')
}

// jsonNumber reports whether s is a JSON number.
func jsonNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	n := digits(s)
	if n == 0 || n > 1 && s[0] == '0' {
		return false
	}
	s = s[n:]
	if strings.HasPrefix(s, ".") {
		n = digits(s[1:])
		if n == 0 {
			return false
		}
		s = s[1+n:]
	}
	if len(s) > 0 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		n = digits(s)
		if n == 0 {
			return false
		}
		s = s[n:]
	}
	return s == ""
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// plainASCII reports whether s is printable ASCII, which JSON strings hold unescaped.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
