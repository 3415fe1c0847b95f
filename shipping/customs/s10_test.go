package customs

import "testing"

func TestS10Number(t *testing.T) {
	for _, tc := range []struct {
		indicator string
		serial    int64
		country   string
		want      string
	}{
		{"EE", 12345678, "US", "EE123456785US"}, // the documented example
		{"LX", 12345678, "US", "LX123456785US"},
		{"RB", 12345678, "GB", "RB123456785GB"}, // the tracking_number_data test numbers
		{"RR", 47312482, "GB", "RR473124829GB"}, // the standard's worked example: check digit 9
		{"CP", 0, "US", "CP000000005US"},        // sum 0: 11 − 0 = 11 → 5
		{"CP", 60000, "US", "CP000600000US"},    // sum 12: 11 − 1 = 10 → 0
		{"LX", 1, "DE", "LX000000014DE"},        // sum 7: 11 − 7 = 4
		{"LX", 99_999_999, "JP", "LX999999995JP"},
		{"lx", 1, "US", ""},
		{"L", 1, "US", ""},
		{"L1", 1, "US", ""},
		{"LX", -1, "US", ""},
		{"LX", 100_000_000, "US", ""},
		{"LX", 1, "usa", ""},
		{"LX", 1, "us", ""},
	} {
		if got := S10Number(tc.indicator, tc.serial, tc.country); got != tc.want {
			t.Errorf("S10Number(%q, %d, %q) = %q; want %q", tc.indicator, tc.serial, tc.country, got, tc.want)
		}
	}
}

func TestValidS10(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{"EE123456785US", true},
		{"RB123456785GB", true},
		{"RB123456785CV", true},
		{"RB123456785CF", true},
		{"RR473124829GB", true},
		{"CP000600000US", true},
		{"RB123456786US", false}, // check digit
		{"RB123456785XX", false}, // no such country
		{"rb123456785us", false},
		{"RB12345678US", false},
		{"RB1234567855US", false},
		{"RB1234567A5US", false},
		{"1B123456785US", false},
		{"", false},
		{"1Z999AA10123456784", false},
	} {
		if got := ValidS10(tc.code); got != tc.want {
			t.Errorf("ValidS10(%q) = %v; want %v", tc.code, got, tc.want)
		}
	}
}

// TestS10RoundTrip: every number S10Number makes is valid, and with any other check digit it
// is not.
func TestS10RoundTrip(t *testing.T) {
	for serial := int64(0); serial < 100_000_000; serial += 999_983 {
		code := S10Number("LX", serial, "US")
		if !ValidS10(code) {
			t.Errorf("ValidS10(%q) = false; want true", code)
		}
		for c := byte('0'); c <= '9'; c++ {
			if c == code[10] {
				continue
			}
			bad := code[:10] + string(c) + code[11:]
			if ValidS10(bad) {
				t.Errorf("ValidS10(%q) = true; want false (the check digit is %c)", bad, code[10])
			}
		}
	}
}

func TestGroupS10(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"EE123456785US", "EE 123 456 785 US"},
		{"ABC", "ABC"},
	} {
		if got := GroupS10(tc.code); got != tc.want {
			t.Errorf("GroupS10(%q) = %q; want %q", tc.code, got, tc.want)
		}
	}
}
