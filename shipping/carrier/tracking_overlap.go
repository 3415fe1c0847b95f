package carrier

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping"
)

// A carrier's tracking numbers must be its own: two carriers whose ranges could issue the same
// number are refused when the second is loaded, since the second would otherwise
// run into the first's labels at buy time.

// Tracking is the tracking scheme of one stored version of a carrier.
type Tracking struct {
	Carrier  string
	Version  int64
	Tracking TrackingScheme
}

// TrackingOverlapError reports that a card's tracking range can issue numbers that other
// carriers' ranges can: Fields names tracking.range_start once per other carrier.
type TrackingOverlapError struct {
	Carriers []string // the other carriers, in the order given
	Fields   []shipping.FieldError
}

// Summary says in one sentence which carriers the range overlaps.
func (e *TrackingOverlapError) Summary() string {
	return "the card's tracking range can issue numbers that carrier " + strings.Join(e.Carriers, ", ") +
		" can issue too; each carrier's range must be its own"
}

// Error is the summary with each field's message, as a shipping.ValidationError lists them.
func (e *TrackingOverlapError) Error() string {
	var b strings.Builder
	b.WriteString(e.Summary())
	for i, f := range e.Fields {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep + f.Field + " " + f.Message)
	}
	return b.String()
}

// CheckTrackingOverlap refuses card when its tracking range can issue a number that one of
// others can or did. others are the schemes of every version of the other carriers; a scheme of
// the card's own carrier is never an overlap, as one carrier's serials are handed out once
// across all its versions.
func (c *Card) CheckTrackingOverlap(others []Tracking) error {
	var e TrackingOverlapError
	for _, o := range others {
		if o.Carrier == c.Code || slices.Contains(e.Carriers, o.Carrier) || !c.Tracking.Overlaps(&o.Tracking) {
			continue
		}
		e.Carriers = append(e.Carriers, o.Carrier)
		e.Fields = append(e.Fields, shipping.FieldError{Field: "tracking.range_start", Code: "overlap", Message: "serials " +
			rangeText(c.Tracking.RangeStart, c.Tracking.RangeEnd) + " can issue the tracking numbers of carrier " + o.Carrier +
			" (version " + strconv.FormatInt(o.Version, 10) + ", serials " + rangeText(o.Tracking.RangeStart, o.Tracking.RangeEnd) + ")"})
	}
	if len(e.Carriers) == 0 {
		return nil
	}
	return &e
}

func rangeText(from, to int64) string {
	return strconv.FormatInt(from, 10) + " to " + strconv.FormatInt(to, 10)
}

// Overlaps reports whether t and o can issue the same tracking number: they share a number
// space (luhn: prefix and digits; usps_impb: application identifier, a service type code and
// the mailer id; ups_1z: shipper number and a service code; s10: a service indicator and the
// country) and their serial ranges meet. A
// 6-digit mailer id that begins a 9-digit one shares numbers with it too: the 9-digit id's last
// three digits are then the first three of the 6-digit id's longer serials.
func (t *TrackingScheme) Overlaps(o *TrackingScheme) bool {
	for _, a := range t.numberSpaces() {
		for _, b := range o.numberSpaces() {
			if a.overlaps(b) {
				return true
			}
		}
	}
	return false
}

// numberSpace is a run of tracking numbers: lead, then a serial from..to zero-padded to width
// digits, then a check digit and tail. Any scheme is one or more of them: a luhn scheme one,
// usps_impb and ups_1z one per service code, s10 one per service indicator, with the country as
// tail.
type numberSpace struct {
	lead     string
	width    int
	tail     string
	from, to int64
}

func (t *TrackingScheme) numberSpaces() []numberSpace {
	var leads []string
	var tail string
	switch t.Scheme {
	case SchemeLuhn:
		leads = []string{t.Prefix}
	case SchemeUSPSIMpb:
		for _, code := range slices.Sorted(maps.Values(t.ServiceTypeCodes)) {
			leads = append(leads, t.applicationIdentifier()+code+t.MailerID)
		}
	case SchemeUPS1Z:
		for _, code := range slices.Sorted(maps.Values(t.ServiceCodes)) {
			leads = append(leads, "1Z"+t.ShipperNumber+code)
		}
	case SchemeS10:
		leads = slices.Sorted(maps.Values(t.ServiceIndicators))
		tail = t.Country
	}
	out := make([]numberSpace, 0, len(leads))
	for _, lead := range slices.Compact(leads) {
		out = append(out, numberSpace{lead: lead, width: t.serialWidth(), tail: tail, from: t.RangeStart, to: t.RangeEnd})
	}
	return out
}

// overlaps reports whether a and b hold a common number. Their numbers agree up to the check
// digit only if one's lead begins the other's and the rest of the longer lead is digits: the
// leading digits of the shorter lead's serials. The check digit is a function of what precedes
// it within a scheme, so equal bodies are equal numbers; across schemes it may differ, and then
// a and b are reported overlapping when they are not, which errs on the safe side.
func (a numberSpace) overlaps(b numberSpace) bool {
	if a.tail != b.tail || len(a.lead)+a.width != len(b.lead)+b.width {
		return false
	}
	if len(a.lead) > len(b.lead) {
		a, b = b, a
	}
	extra, ok := strings.CutPrefix(b.lead, a.lead)
	if !ok || digitCount(extra) != len(extra) {
		return false
	}
	// b's serials as a's: the rest of b's lead, then b's serial digits. Compared as decimal
	// strings, so that no width overflows an int64.
	lo, hi := extra+padSerial(b.from, b.width), extra+padSerial(b.to, b.width)
	return compareDecimal(padSerial(a.from, a.width), hi) <= 0 && compareDecimal(lo, padSerial(a.to, a.width)) <= 0
}

func padSerial(n int64, width int) string {
	s := strconv.FormatInt(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// compareDecimal compares two non-negative decimal numbers written with any leading zeros.
func compareDecimal(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
