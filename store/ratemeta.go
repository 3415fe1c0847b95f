package store

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping"
)

// decodeRateMetadata reads a shipping_rates.rate_metadata value. Lists read hundreds of them per
// page, so the exact shape CreateShipment writes is parsed by hand; anything else falls back
// to encoding/json, which also reads the shape written before the real product's field names
// were adopted ({"zone","billable_weight_oz","surcharges":[{"type","amount"}]}).
func decodeRateMetadata(s string, m *shipping.RateMetadata) error {
	if fastRateMetadata(s, m) {
		return nil
	}
	var stored struct {
		shipping.RateMetadata
		Zone             *int  `json:"zone"`
		BillableWeightOz int64 `json:"billable_weight_oz"`
		Surcharges       []struct {
			Type   string  `json:"type"`
			Amount float64 `json:"amount"`
		} `json:"surcharges"`
	}
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return err
	}
	*m = stored.RateMetadata
	if stored.Zone != nil && m.USPSZone == 0 {
		// The earlier shape knew neither the actual weight nor the volume; they stay 0.
		*m = shipping.RateMetadata{USPSZone: *stored.Zone, BillableWeight: stored.BillableWeightOz,
			WeightMetadata: shipping.WeightMetadata{BillableOzWeight: stored.BillableWeightOz,
				DimFactor: shipping.DimFactor, DimThreshold: shipping.DimThreshold}}
		for _, sc := range stored.Surcharges {
			m.SurchargesMetadata = append(m.SurchargesMetadata, shipping.SurchargeMetadata{SurchargeType: sc.Type,
				Surcharge: shipping.Money{Amount: sc.Amount, Currency: "USD"}})
		}
	}
	if m.SurchargesMetadata == nil {
		m.SurchargesMetadata = []shipping.SurchargeMetadata{}
	}
	return nil
}

// metaParser reads the fixed shape encoding/json writes for shipping.RateMetadata. Each method
// consumes from s and reports whether s continued as expected.
type metaParser struct{ s string }

func (p *metaParser) take(prefix string) bool {
	if !strings.HasPrefix(p.s, prefix) {
		return false
	}
	p.s = p.s[len(prefix):]
	return true
}

// until returns the non-empty text before the first of stops, leaving s at that byte.
func (p *metaParser) until(stops string) (string, bool) {
	i := strings.IndexAny(p.s, stops)
	if i <= 0 {
		return "", false
	}
	v := p.s[:i]
	p.s = p.s[i:]
	return v, true
}

// int64Before reads a JSON integer ending at one of stops.
func (p *metaParser) int64Before(stops string) (int64, bool) {
	v, ok := p.until(stops)
	if !ok || !jsonInt(v) {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// intBefore reads a JSON integer that fits an int.
func (p *metaParser) intBefore(stops string) (int, bool) {
	v, ok := p.until(stops)
	if !ok || !jsonInt(v) {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// floatBefore reads a JSON number ending at one of stops.
func (p *metaParser) floatBefore(stops string) (float64, bool) {
	v, ok := p.until(stops)
	if !ok || !jsonNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// stringBefore reads the contents of a JSON string without escapes, up to its closing quote.
func (p *metaParser) stringBefore() (string, bool) {
	v, ok := p.until(`"\`)
	return v, ok && plainASCII(v)
}

// fastRateMetadata parses
//
//	{"usps_zone":N,"billable_weight":N,"weight_metadata":{"actual_oz_weight":F,"billable_oz_weight":N,
//	 "dim_factor":N,"dim_threshold":N,"volume":F},"surcharges_metadata":[{"surcharge_type":"T",
//	 "surcharge":{"amount":F,"currency":"C"}},…]}
//
// and reports whether s had exactly that shape.
func fastRateMetadata(s string, m *shipping.RateMetadata) bool {
	p := &metaParser{s: s}
	var out shipping.RateMetadata
	var ok bool
	w := &out.WeightMetadata
	if !p.take(`{"usps_zone":`) {
		return false
	}
	if out.USPSZone, ok = p.intBefore(","); !ok || !p.take(`,"billable_weight":`) {
		return false
	}
	if out.BillableWeight, ok = p.int64Before(","); !ok || !p.take(`,"weight_metadata":{"actual_oz_weight":`) {
		return false
	}
	if w.ActualOzWeight, ok = p.floatBefore(","); !ok || !p.take(`,"billable_oz_weight":`) {
		return false
	}
	if w.BillableOzWeight, ok = p.int64Before(","); !ok || !p.take(`,"dim_factor":`) {
		return false
	}
	if w.DimFactor, ok = p.intBefore(","); !ok || !p.take(`,"dim_threshold":`) {
		return false
	}
	if w.DimThreshold, ok = p.intBefore(","); !ok || !p.take(`,"volume":`) {
		return false
	}
	if w.Volume, ok = p.floatBefore("}"); !ok || !p.take(`},"surcharges_metadata":[`) {
		return false
	}
	out.SurchargesMetadata = []shipping.SurchargeMetadata{}
	for !p.take("]") {
		if len(out.SurchargesMetadata) > 0 && !p.take(",") {
			return false
		}
		var sc shipping.SurchargeMetadata
		if !p.take(`{"surcharge_type":"`) {
			return false
		}
		if sc.SurchargeType, ok = p.stringBefore(); !ok || !p.take(`","surcharge":{"amount":`) {
			return false
		}
		if sc.Surcharge.Amount, ok = p.floatBefore(","); !ok || !p.take(`,"currency":"`) {
			return false
		}
		if sc.Surcharge.Currency, ok = p.stringBefore(); !ok || !p.take(`"}}`) {
			return false
		}
		out.SurchargesMetadata = append(out.SurchargesMetadata, sc)
	}
	if p.s != "}" {
		return false
	}
	*m = out
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
