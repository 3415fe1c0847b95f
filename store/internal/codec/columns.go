package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping"
)

// EncodeSurcharges is the surcharges column of a quote in currency: a JSON object of each
// surcharge's cents by its type, in the quote's order ({"FUEL":19,"DAS":300}).
func EncodeSurcharges(ss []shipping.SurchargeMetadata, currency string) (string, error) {
	b := []byte{'{'}
	for i, s := range ss {
		cents, err := WholeCents(s.Surcharge, currency)
		if err != nil {
			return "", fmt.Errorf("surcharge %s: %w", s.SurchargeType, err)
		}
		typ, err := json.Marshal(s.SurchargeType)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(append(b, typ...), ':'), cents, 10)
	}
	return string(append(b, '}')), nil
}

// WholeCents is m in cents, if it is a whole number of cents of currency.
func WholeCents(m shipping.Money, currency string) (int64, error) {
	cents := int64(math.Round(m.Amount * 100))
	if m != (shipping.Money{Amount: float64(cents) / 100, Currency: currency}) {
		return 0, fmt.Errorf("%v is not in whole cents of %s", m, currency)
	}
	return cents, nil
}

// DecodeSurcharges reads a surcharges column. A quote's are read by every buy and full read,
// so the shape EncodeSurcharges writes is parsed by hand; anything else (escapes) goes to
// encoding/json's tokens, which keep the order.
func DecodeSurcharges(s, currency string) ([]shipping.SurchargeMetadata, error) {
	out, ok := fastSurcharges(s, currency)
	if ok {
		return out, nil
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %q", s)
	}
	out = []shipping.SurchargeMetadata{}
	for d.More() {
		typ, err := d.Token()
		if err != nil {
			return nil, err
		}
		v, err := d.Token()
		if err != nil {
			return nil, err
		}
		n, ok := v.(json.Number)
		cents, err := n.Int64()
		if !ok || err != nil {
			return nil, fmt.Errorf("surcharge %v: %v is not cents", typ, v)
		}
		out = append(out, shipping.SurchargeMetadata{SurchargeType: typ.(string),
			Surcharge: shipping.Money{Amount: float64(cents) / 100, Currency: currency}})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more after the object: %q", s)
	}
	return out, nil
}

// fastSurcharges parses `{"FUEL":19,…}` with plain types (no escapes).
func fastSurcharges(s, currency string) ([]shipping.SurchargeMetadata, bool) {
	out := []shipping.SurchargeMetadata{}
	p := metaParser{s}
	if !p.take("{") {
		return nil, false
	}
	for !p.take("}") {
		if len(out) > 0 && !p.take(",") {
			return nil, false
		}
		var typ string
		var cents int64
		if !(p.take(`"`) && p.string(&typ) && p.take(`":`) && p.int64(&cents, ",}")) {
			return nil, false
		}
		out = append(out, shipping.SurchargeMetadata{SurchargeType: typ, Surcharge: shipping.Money{Amount: float64(cents) / 100, Currency: currency}})
	}
	return out, p.s == ""
}

// DecodeMessages reads a shipment_requests.messages column.
func DecodeMessages(s *string) ([]shipping.Reason, error) {
	if s == nil {
		return nil, nil
	}
	if rest, ok := strings.CutPrefix(*s, "["); ok {
		if ms, ok := fastMessages(rest); ok {
			return ms, nil
		}
	}
	ms := []shipping.Reason{}
	err := json.Unmarshal([]byte(*s), &ms)
	return ms, err
}

// DecodeRateMetadata reads a rate metadata value as an invoice's line items keep it. A page of
// line items reads a hundred of them, so the exact shape encoding/json writes is parsed by hand;
// anything else (an escape, a field the hand parser does not know) goes to encoding/json.
func DecodeRateMetadata(s string, m *shipping.RateMetadata) error {
	if FastRateMetadata(s, m) {
		return nil
	}
	*m = shipping.RateMetadata{}
	if err := json.Unmarshal([]byte(s), m); err != nil {
		return err
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

// int64 reads a JSON integer ending at one of stops into v.
func (p *metaParser) int64(v *int64, stops string) bool {
	s, ok := p.until(stops)
	if !ok || !jsonInt(s) {
		return false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*v = n
	return err == nil
}

// int reads a JSON integer that fits an int into v.
func (p *metaParser) int(v *int, stops string) bool {
	s, ok := p.until(stops)
	if !ok || !jsonInt(s) {
		return false
	}
	n, err := strconv.Atoi(s)
	*v = n
	return err == nil
}

// float reads a JSON number ending at one of stops into v.
func (p *metaParser) float(v *float64, stops string) bool {
	s, ok := p.until(stops)
	if !ok || !jsonNumber(s) {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	*v = f
	return err == nil
}

// string reads the contents of a JSON string without escapes, up to its closing quote, into v.
func (p *metaParser) string(v *string) bool {
	s, ok := p.until(`"\`)
	*v = s
	return ok && plainASCII(s)
}

// FastRateMetadata parses
//
//	{"usps_zone":N,"billable_weight":N,"weight_metadata":{"actual_oz_weight":F,"billable_oz_weight":N,
//	 "dim_factor":N,"dim_threshold":N,"volume":F},"surcharges_metadata":[{"surcharge_type":"T",
//	 "surcharge":{"amount":F,"currency":"C"}},…]}
//
// and reports whether s had exactly that shape.
func FastRateMetadata(s string, m *shipping.RateMetadata) bool {
	p := &metaParser{s: s}
	return p.rateMetadata(m) && p.s == ""
}

// rateMetadata consumes a rate_metadata object of FastRateMetadata's shape into m.
func (p *metaParser) rateMetadata(m *shipping.RateMetadata) bool {
	var out shipping.RateMetadata
	w := &out.WeightMetadata
	ok := p.take(`{"usps_zone":`) && p.int(&out.USPSZone, ",") &&
		p.take(`,"billable_weight":`) && p.int64(&out.BillableWeight, ",") &&
		p.take(`,"weight_metadata":{"actual_oz_weight":`) && p.float(&w.ActualOzWeight, ",") &&
		p.take(`,"billable_oz_weight":`) && p.int64(&w.BillableOzWeight, ",") &&
		p.take(`,"dim_factor":`) && p.int(&w.DimFactor, ",") &&
		p.take(`,"dim_threshold":`) && p.int(&w.DimThreshold, ",") &&
		p.take(`,"volume":`) && p.float(&w.Volume, "}") &&
		p.take(`},"surcharges_metadata":[`)
	if !ok {
		return false
	}
	out.SurchargesMetadata = []shipping.SurchargeMetadata{}
	for !p.take("]") {
		if len(out.SurchargesMetadata) > 0 && !p.take(",") {
			return false
		}
		var sc shipping.SurchargeMetadata
		ok := p.take(`{"surcharge_type":"`) && p.string(&sc.SurchargeType) &&
			p.take(`","surcharge":{"amount":`) && p.float(&sc.Surcharge.Amount, ",") &&
			p.take(`,"currency":"`) && p.string(&sc.Surcharge.Currency) && p.take(`"}}`)
		if !ok {
			return false
		}
		out.SurchargesMetadata = append(out.SurchargesMetadata, sc)
	}
	if p.take(`,"carrier_version":`) && !p.int64(&out.CarrierVersion, "}") {
		return false
	}
	if !p.take("}") {
		return false
	}
	*m = out
	return true
}

// fastMessages parses a shipment's messages after their opening bracket, as its rendering has
// them,
//
//	{"carrier":"S","service":"S","message":"S"},…]
//
// (service absent for a whole carrier), and reports whether s started with exactly that shape;
// what follows the array is not read.
func fastMessages(s string) ([]shipping.Reason, bool) {
	p := &metaParser{s: s}
	out := []shipping.Reason{}
	for !p.take("]") {
		if len(out) > 0 && !p.take(",") {
			return nil, false
		}
		var m shipping.Reason
		ok := p.take(`{"carrier":"`) && p.string(&m.Carrier) && p.take(`",`) &&
			(!p.take(`"service":"`) || p.string(&m.Service) && p.take(`",`)) &&
			p.take(`"message":"`) && p.string(&m.Message) && p.take(`"}`)
		if !ok {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
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
