package carrier

import (
	"errors"
	"strings"
	"testing"
)

func TestTrackingOverlaps(t *testing.T) {
	luhn := func(prefix string, digits int, from, to int64) TrackingScheme {
		return TrackingScheme{Scheme: SchemeLuhn, Prefix: prefix, Digits: digits, RangeStart: from, RangeEnd: to}
	}
	impb := func(ai, mid string, codes map[string]string, from, to int64) TrackingScheme {
		return TrackingScheme{Scheme: SchemeUSPSIMpb, ApplicationIdentifier: ai, MailerID: mid, ServiceTypeCodes: codes, RangeStart: from, RangeEnd: to}
	}
	ups := func(shipper string, codes map[string]string, from, to int64) TrackingScheme {
		return TrackingScheme{Scheme: SchemeUPS1Z, ShipperNumber: shipper, ServiceCodes: codes, RangeStart: from, RangeEnd: to}
	}
	s10 := func(indicators map[string]string, country string, from, to int64) TrackingScheme {
		return TrackingScheme{Scheme: SchemeS10, ServiceIndicators: indicators, Country: country, RangeStart: from, RangeEnd: to}
	}
	ground := map[string]string{"GROUND": "612"}
	for _, tt := range []struct {
		name string
		a, b TrackingScheme
		want bool
		// witness, for an overlap: a service and serial of each that make the same number.
		serviceA string
		serialA  int64
		serviceB string
		serialB  int64
	}{
		{name: "luhn, same prefix and digits, ranges meet", a: luhn("AC", 10, 1, 100), b: luhn("AC", 10, 50, 500), want: true,
			serviceA: "X", serialA: 60, serviceB: "Y", serialB: 60},
		{name: "luhn, ranges touch at one serial", a: luhn("AC", 10, 1, 100), b: luhn("AC", 10, 100, 200), want: true,
			serviceA: "X", serialA: 100, serviceB: "X", serialB: 100},
		{name: "luhn, ranges apart", a: luhn("AC", 10, 1, 100), b: luhn("AC", 10, 101, 200)},
		{name: "luhn, other prefix", a: luhn("AC", 10, 1, 100), b: luhn("AD", 10, 1, 100)},
		{name: "luhn, other digits", a: luhn("AC", 10, 1, 100), b: luhn("AC", 11, 1, 100)},
		{name: "luhn, a prefix that begins the other", a: luhn("AC", 10, 1, 100), b: luhn("ACX", 9, 1, 100)},
		{name: "impb, shared service type code", a: impb("", "927007687", ground, 1194802, 1199999),
			b: impb("92", "927007687", map[string]string{"GROUND": "612", "PRIORITY": "055"}, 1199999, 1200500), want: true,
			serviceA: "GROUND", serialA: 1199999, serviceB: "GROUND", serialB: 1199999},
		{name: "impb, shared code under another service name", a: impb("", "927007687", ground, 1, 10),
			b: impb("", "927007687", map[string]string{"PARCEL": "612"}, 5, 5), want: true,
			serviceA: "GROUND", serialA: 5, serviceB: "PARCEL", serialB: 5},
		{name: "impb, no shared service type code", a: impb("", "927007687", ground, 1, 10),
			b: impb("", "927007687", map[string]string{"PRIORITY": "055"}, 1, 10)},
		{name: "impb, other mailer id", a: impb("", "927007687", ground, 1, 10), b: impb("", "927007688", ground, 1, 10)},
		{name: "impb, other application identifier", a: impb("92", "927007687", ground, 1, 10), b: impb("93", "927007687", ground, 1, 10)},
		{name: "impb, ranges apart", a: impb("", "927007687", ground, 1, 10), b: impb("", "927007687", ground, 11, 20)},
		{name: "impb, a 6-digit mailer id that begins the 9-digit one, serials meet", a: impb("", "927007", ground, 6870000000, 6879999999),
			b: impb("", "927007687", ground, 1, 100), want: true,
			serviceA: "GROUND", serialA: 6870000042, serviceB: "GROUND", serialB: 42},
		{name: "impb, a 6-digit mailer id that begins the 9-digit one, serials apart", a: impb("", "927007", ground, 1, 6869999999),
			b: impb("", "927007687", ground, 1, 9999999)},
		{name: "impb, 6 and 9-digit mailer ids that differ", a: impb("", "927008", ground, 1, 9999999999), b: impb("", "927007687", ground, 1, 9999999)},
		{name: "ups, same shipper, shared service code", a: ups("999AA1", map[string]string{"GROUND": "03", "AIR": "01"}, 1, 5000),
			b: ups("999AA1", map[string]string{"NEXT_DAY": "01"}, 4000, 9000), want: true,
			serviceA: "AIR", serialA: 4500, serviceB: "NEXT_DAY", serialB: 4500},
		{name: "ups, same shipper, no shared service code", a: ups("999AA1", map[string]string{"GROUND": "03"}, 1, 5000),
			b: ups("999AA1", map[string]string{"GROUND": "01"}, 1, 5000)},
		{name: "ups, other shipper", a: ups("999AA1", map[string]string{"GROUND": "03"}, 1, 5000), b: ups("999AA2", map[string]string{"GROUND": "03"}, 1, 5000)},
		{name: "ups, ranges apart", a: ups("999AA1", map[string]string{"GROUND": "03"}, 1, 5000), b: ups("999AA1", map[string]string{"GROUND": "03"}, 5001, 6000)},
		{name: "s10, shared indicator and country, ranges meet", a: s10(map[string]string{"PARCEL": "CP", "EXPRESS": "EE"}, "US", 1, 1000),
			b: s10(map[string]string{"INTL": "EE"}, "US", 1000, 2000), want: true, serviceA: "EXPRESS", serialA: 1000, serviceB: "INTL", serialB: 1000},
		{name: "s10, shared indicator, other country", a: s10(map[string]string{"X": "EE"}, "US", 1, 1000), b: s10(map[string]string{"X": "EE"}, "CA", 1, 1000)},
		{name: "s10, other indicator", a: s10(map[string]string{"X": "EE"}, "US", 1, 1000), b: s10(map[string]string{"X": "CP"}, "US", 1, 1000)},
		{name: "s10, ranges apart", a: s10(map[string]string{"X": "EE"}, "US", 1, 1000), b: s10(map[string]string{"X": "EE"}, "US", 1001, 2000)},
		{name: "s10 and a luhn of its indicator and width", a: s10(map[string]string{"X": "LX"}, "US", 1, 1000), b: luhn("LX", 8, 1, 1000)},
		{name: "luhn and ups", a: luhn("AC", 15, 1, 100), b: ups("999AA1", map[string]string{"GROUND": "03"}, 1, 100)},
		{name: "impb and luhn", a: impb("", "927007687", ground, 1, 100), b: luhn("AC", 7, 1, 100)},
		{name: "luhn, 30 digits, full ranges", a: luhn("AC", 30, 0, 1<<62), b: luhn("AC", 30, 1<<61, 1<<63-1), want: true,
			serviceA: "X", serialA: 1 << 61, serviceB: "X", serialB: 1 << 61},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Overlaps(&tt.b); got != tt.want {
				t.Errorf("%+v.Overlaps(%+v) = %v; want %v", tt.a, tt.b, got, tt.want)
			}
			if got := tt.b.Overlaps(&tt.a); got != tt.want {
				t.Errorf("%+v.Overlaps(%+v) = %v; want %v", tt.b, tt.a, got, tt.want)
			}
			if tt.want {
				// The overlap is real: both issue this number.
				na, nb := tt.a.Number(tt.serviceA, tt.serialA), tt.b.Number(tt.serviceB, tt.serialB)
				if na != nb {
					t.Errorf("witness: %s serial %d = %s, %s serial %d = %s; want the same number", tt.serviceA, tt.serialA, na, tt.serviceB, tt.serialB, nb)
				}
			}
		})
	}
}

// TestCheckTrackingOverlap: a card is refused for each other carrier whose range overlaps its
// own, naming tracking.range_start and that carrier; its own carrier's versions never count.
func TestCheckTrackingOverlap(t *testing.T) {
	card := testCard() // ACME, luhn AC, 10 digits, serials 100 to 102
	other := func(carrier string, version, from, to int64) Tracking {
		return Tracking{Carrier: carrier, Version: version,
			Tracking: TrackingScheme{Scheme: SchemeLuhn, Prefix: "AC", Digits: 10, RangeStart: from, RangeEnd: to}}
	}
	for _, tt := range []struct {
		name     string
		others   []Tracking
		carriers []string
	}{
		{"no other carrier", nil, nil},
		{"its own earlier version", []Tracking{other("ACME", 1, 1, 1000)}, nil},
		{"another carrier apart", []Tracking{other("BETA", 1, 1, 99)}, nil},
		{"another carrier overlapping", []Tracking{other("BETA", 1, 1, 99), other("BETA", 2, 102, 200)}, []string{"BETA"}},
		{"two versions of one carrier, named once", []Tracking{other("BETA", 1, 1, 100), other("BETA", 2, 101, 200)}, []string{"BETA"}},
		{"two carriers", []Tracking{other("BETA", 3, 1, 100), other("GAMMA", 1, 101, 101)}, []string{"BETA", "GAMMA"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := card.CheckTrackingOverlap(tt.others)
			var oe *TrackingOverlapError
			if tt.carriers == nil {
				if err != nil {
					t.Errorf("CheckTrackingOverlap(%+v) = %v; want nil", tt.others, err)
				}
				return
			}
			if !errors.As(err, &oe) || strings.Join(oe.Carriers, ",") != strings.Join(tt.carriers, ",") || len(oe.Fields) != len(tt.carriers) {
				t.Fatalf("CheckTrackingOverlap(%+v) = %v; want an overlap with %q", tt.others, err, tt.carriers)
			}
			for i, f := range oe.Fields {
				if f.Field != "tracking.range_start" || f.Code != "overlap" || !strings.Contains(f.Message, "carrier "+tt.carriers[i]+" ") {
					t.Errorf("field %d = %+v; want tracking.range_start naming carrier %s", i, f, tt.carriers[i])
				}
			}
			if !strings.Contains(err.Error(), tt.carriers[0]) {
				t.Errorf("message %q does not name carrier %s", err, tt.carriers[0])
			}
		})
	}
}
