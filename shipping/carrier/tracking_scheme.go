package carrier

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/customs"
)

// Tracking number schemes.
const (
	SchemeLuhn     = "luhn"      // prefix + serial + Luhn check digit over the serial
	SchemeUSPSIMpb = "usps_impb" // 22 digits: AI, service type, mailer id, serial, USPS Mod 10
	SchemeUPS1Z    = "ups_1z"    // 1Z + shipper number + service code + 7-digit serial + check digit
	SchemeS10      = "s10"       // UPU S10: service indicator + 8-digit serial + check digit + country
)

// TrackingScheme is how a carrier's tracking numbers are made from serials, and the range of
// serials the carrier assigned to this shipper.
type TrackingScheme struct {
	Scheme string `json:"scheme"`
	// luhn
	Prefix string `json:"prefix,omitempty"` // 2 to 4 capital letters
	Digits int    `json:"digits,omitempty"` // the serial's width, zero-padded
	// usps_impb
	ApplicationIdentifier string            `json:"application_identifier,omitempty"` // 2 digits, "92" when omitted
	MailerID              string            `json:"mailer_id,omitempty"`              // 6 or 9 digits
	ServiceTypeCodes      map[string]string `json:"service_type_codes,omitempty"`     // service → 3 digits
	// ups_1z
	ShipperNumber string            `json:"shipper_number,omitempty"` // 6 letters or digits
	ServiceCodes  map[string]string `json:"service_codes,omitempty"`  // service → 2 digits
	// s10
	ServiceIndicators map[string]string `json:"service_indicators,omitempty"` // service → 2 capital letters
	Country           string            `json:"country,omitempty"`            // ISO 3166-1 alpha-2 of the issuing post

	RangeStart int64 `json:"range_start"`
	RangeEnd   int64 `json:"range_end"`
}

// DefaultTrackingScheme is the scheme of a card that gives none: luhn, prefixed by the first
// two letters of the carrier's code (X standing in for missing ones), 16 digits, every serial.
func DefaultTrackingScheme(code string) TrackingScheme {
	prefix := []byte("XX")
	n := 0
	for i := 0; i < len(code) && n < 2; i++ {
		if code[i] >= 'A' && code[i] <= 'Z' {
			prefix[n] = code[i]
			n++
		}
	}
	return TrackingScheme{Scheme: SchemeLuhn, Prefix: string(prefix), Digits: 16, RangeStart: 1, RangeEnd: pow10(16) - 1}
}

// serialWidth is how many digits a serial has in the scheme's numbers; 0 for no scheme.
func (t *TrackingScheme) serialWidth() int {
	switch t.Scheme {
	case SchemeLuhn:
		return t.Digits
	case SchemeUSPSIMpb:
		return 21 - len(t.applicationIdentifier()) - 3 - len(t.MailerID)
	case SchemeUPS1Z:
		return 7
	case SchemeS10:
		return 8
	}
	return 0
}

func (t *TrackingScheme) applicationIdentifier() string {
	if t.ApplicationIdentifier == "" {
		return "92"
	}
	return t.ApplicationIdentifier
}

func allDigits(s string, n int) bool { return len(s) == n && digitCount(s) == n }

func (t *TrackingScheme) validate(v *shipping.ValidationError, p string, services []CardService) {
	// serviceNamed refuses codes of services the card does not have.
	serviceNamed := func(field string, codes map[string]string) {
		for code := range codes {
			if !slices.ContainsFunc(services, func(s CardService) bool { return s.Code == code }) {
				v.Add(p+"."+field+"."+code, "unknown_service", "names no service of the card")
			}
		}
	}
	serviceCodes := func(field string, codes map[string]string, n int) {
		for _, s := range services {
			if c, ok := codes[s.Code]; !ok || !allDigits(c, n) {
				v.Add(p+"."+field+"."+s.Code, "invalid", "must be the service's "+strconv.Itoa(n)+"-digit code")
			}
		}
		serviceNamed(field, codes)
	}
	switch t.Scheme {
	case SchemeLuhn:
		if len(t.Prefix) < 2 || len(t.Prefix) > 4 || strings.ContainsFunc(t.Prefix, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			v.Add(p+".prefix", "invalid", "must be 2 to 4 capital letters")
		}
		if t.Digits < 4 || t.Digits > 30 {
			v.Add(p+".digits", "out_of_range", "must be 4 to 30")
		}
	case SchemeUSPSIMpb:
		if !allDigits(t.applicationIdentifier(), 2) {
			v.Add(p+".application_identifier", "invalid", "must be 2 digits")
		}
		if !allDigits(t.MailerID, 6) && !allDigits(t.MailerID, 9) {
			v.Add(p+".mailer_id", "invalid", "must be 6 or 9 digits")
		}
		serviceCodes("service_type_codes", t.ServiceTypeCodes, 3)
	case SchemeUPS1Z:
		if len(t.ShipperNumber) != 6 || strings.ContainsFunc(t.ShipperNumber, func(r rune) bool {
			return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z')
		}) {
			v.Add(p+".shipper_number", "invalid", "must be 6 capital letters or digits")
		}
		serviceCodes("service_codes", t.ServiceCodes, 2)
	case SchemeS10:
		for _, s := range services {
			if c, ok := t.ServiceIndicators[s.Code]; !ok || !isUpperAlpha(c, 2) {
				v.Add(p+".service_indicators."+s.Code, "invalid", "must be the service's two-letter S10 service indicator")
			}
		}
		serviceNamed("service_indicators", t.ServiceIndicators)
		if _, ok := customs.LookupCountry(t.Country); !ok || !isUpperAlpha(t.Country, 2) {
			v.Add(p+".country", "invalid", "must be the ISO 3166-1 alpha-2 code of the issuing post")
		}
	default:
		v.Add(p+".scheme", "invalid", "must be luhn, usps_impb, ups_1z or s10")
		return
	}
	// A field of another scheme is refused, not ignored: the card says something it would not do.
	for _, f := range []struct {
		field, scheme string
		set           bool
	}{{"prefix", SchemeLuhn, t.Prefix != ""}, {"digits", SchemeLuhn, t.Digits != 0},
		{"application_identifier", SchemeUSPSIMpb, t.ApplicationIdentifier != ""}, {"mailer_id", SchemeUSPSIMpb, t.MailerID != ""},
		{"service_type_codes", SchemeUSPSIMpb, t.ServiceTypeCodes != nil},
		{"shipper_number", SchemeUPS1Z, t.ShipperNumber != ""}, {"service_codes", SchemeUPS1Z, t.ServiceCodes != nil},
		{"service_indicators", SchemeS10, t.ServiceIndicators != nil}, {"country", SchemeS10, t.Country != ""}} {
		if f.set && f.scheme != t.Scheme {
			v.Add(p+"."+f.field, "invalid", "belongs to the "+f.scheme+" scheme, not "+t.Scheme)
		}
	}
	if t.RangeStart < 0 {
		v.Add(p+".range_start", "out_of_range", "must be at least 0")
	}
	if t.RangeEnd < t.RangeStart {
		v.Add(p+".range_end", "out_of_range", "must be at least range_start")
	}
	if w := t.serialWidth(); w > 0 && w < 19 && t.RangeEnd >= pow10(w) {
		v.Add(p+".range_end", "out_of_range", "must fit the scheme's "+strconv.Itoa(w)+" serial digits")
	} else if t.RangeEnd > MaxSerial {
		v.Add(p+".range_end", "out_of_range", "must be at most "+strconv.FormatInt(MaxSerial, 10))
	}
}

// MaxSerial is the largest serial a range may reach: 18 digits, far from int64's end, so
// that counting serials and reserving them in blocks never overflows.
const MaxSerial = 999_999_999_999_999_999

func pow10(n int) int64 {
	p := int64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

// Number is the tracking number of serial for service, with its check digit.
func (t *TrackingScheme) Number(service string, serial int64) string {
	s := strconv.FormatInt(serial, 10)
	if w := t.serialWidth(); len(s) < w {
		s = strings.Repeat("0", w-len(s)) + s
	}
	switch t.Scheme {
	case SchemeUSPSIMpb:
		body := t.applicationIdentifier() + t.ServiceTypeCodes[service] + t.MailerID + s
		return body + string(uspsMod10(body))
	case SchemeUPS1Z:
		body := t.ShipperNumber + t.ServiceCodes[service] + s
		return "1Z" + body + string(ups1ZCheck(body))
	case SchemeS10:
		return customs.S10Number(t.ServiceIndicators[service], serial, t.Country)
	}
	return t.Prefix + s + string(luhnDigit([]byte(s)))
}

// ValidTrackingNumber reports whether code is a number of the scheme with a correct check digit.
func (t *TrackingScheme) ValidTrackingNumber(code string) bool {
	switch t.Scheme {
	case SchemeUSPSIMpb:
		return allDigits(code, 22) && uspsMod10(code[:21]) == code[21]
	case SchemeUPS1Z:
		return len(code) == 18 && strings.HasPrefix(code, "1Z") && ups1ZCheck(code[2:17]) == code[17]
	case SchemeS10:
		return customs.ValidS10(code) && strings.HasSuffix(code, t.Country) && slices.Contains(slices.Collect(maps.Values(t.ServiceIndicators)), code[:2])
	case SchemeLuhn:
		d := code[min(len(code), len(t.Prefix)):]
		return strings.HasPrefix(code, t.Prefix) && allDigits(d, t.Digits+1) && luhnDigit([]byte(d[:t.Digits])) == d[t.Digits]
	}
	return false
}

// uspsMod10 is the USPS Mod 10 check digit of a string of digits: from the right, digits are
// weighted 3 and 1 alternately (the rightmost 3), and the check digit brings the sum to a
// multiple of 10.
func uspsMod10(digits string) byte {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 {
			d *= 3
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// ups1ZCheck is the check digit of the 15 characters after a UPS number's "1Z": letters count
// as digits ((c - 'A' + 2) mod 10), the characters at even positions (counting from 1) twice,
// and the check digit brings the sum to a multiple of 10.
func ups1ZCheck(s string) byte {
	sum := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		d := int(c - '0')
		if c >= 'A' && c <= 'Z' {
			d = int(c-'A'+2) % 10
		}
		if i%2 == 1 {
			d *= 2
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// GroupTrackingCode is a tracking number as its carrier prints it for people: a UPS 1Z number
// as 1Z 999 AA1 01 2345 678 4, a UPU S10 one as EE 123 456 785 US, any other (a USPS IMpb
// among them) in groups of four characters.
func GroupTrackingCode(code string) string {
	if customs.ValidS10(code) {
		return customs.GroupS10(code)
	}
	if len(code) == 18 && strings.HasPrefix(code, "1Z") {
		return strings.Join([]string{code[:2], code[2:5], code[5:8], code[8:10], code[10:14], code[14:17], code[17:]}, " ")
	}
	var b strings.Builder
	for i, r := range code {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
