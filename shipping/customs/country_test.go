package customs

import (
	"flag"
	"strings"
	"testing"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

func TestLookupCountry(t *testing.T) {
	for _, tc := range []struct {
		code, name string
		ok         bool
	}{
		{"CA", "Canada", true},
		{" ca ", "Canada", true},
		{"GB", "United Kingdom", true},
		{"JP", "Japan", true},
		{"US", "United States of America", true},
		{"XK", "", false}, // user-assigned, not in ISO 3166-1
		{"AC", "", false}, // only reserved
		{"XX", "", false},
		{"UK", "", false},
		{"USA", "", false},
		{"", "", false},
	} {
		c, ok := LookupCountry(tc.code)
		if ok != tc.ok || c.Name != tc.name {
			t.Errorf("LookupCountry(%q) = %q, %v; want %q, %v", tc.code, c.Name, ok, tc.name, tc.ok)
		}
	}
}

// TestCountryTable checks the table as a whole: every ISO 3166-1 code, and every country's own
// postal-code examples read back as written.
func TestCountryTable(t *testing.T) {
	if n := len(countries()); n != 249 {
		t.Errorf("the table has %d countries; want the 249 of ISO 3166-1", n)
	}
	for code, c := range countries() {
		if c.Code != code || len(code) != 2 || c.Name == "" {
			t.Errorf("country %q = %+v; want its code and name", code, c)
		}
		for _, ex := range c.examples {
			if got, ok := c.NormalizePostalCode(ex); !ok || got != ex {
				t.Errorf("%s NormalizePostalCode(%q) = %q, %v; want it unchanged", code, ex, got, ok)
			}
		}
		for _, s := range c.Subdivisions {
			if got, ok := c.LookupState(s.Code); !ok || got.Code != s.Code {
				t.Errorf("%s LookupState(%q) = %q, %v; want itself", code, s.Code, got.Code, ok)
			}
		}
	}
	for _, code := range []string{"US", "CA", "MX", "GB", "DE", "FR", "AU", "JP", "NL", "IT", "ES"} {
		if c, _ := LookupCountry(code); c.postalCode == nil || !c.PostalCodeRequired {
			t.Errorf("%s has no required postal-code format", code)
		}
	}
	for _, code := range []string{"US", "CA", "AU", "MX"} {
		if c, _ := LookupCountry(code); !c.StateRequired || len(c.Subdivisions) == 0 {
			t.Errorf("%s: StateRequired = %v with %d subdivisions; want a required, listed state", code, c.StateRequired, len(c.Subdivisions))
		}
	}
}

func TestNormalizePostalCode(t *testing.T) {
	for _, tc := range []struct {
		country, zip, want string
		ok                 bool
	}{
		{"US", "94105", "94105", true},
		{"US", "94105-1234", "94105-1234", true},
		{"US", "94105 1234", "94105-1234", true},
		{"US", "941051234", "94105-1234", true},
		{"US", "9410", "", false},
		{"US", "ABCDE", "", false},
		{"US", "", "", false},
		{"CA", "k1a0b1", "K1A 0B1", true},
		{"CA", "M5H 2N2", "M5H 2N2", true},
		{"CA", " m5h   2n2 ", "M5H 2N2", true},
		{"CA", "M5H-2N2", "M5H 2N2", true},
		{"CA", "D1A 0B1", "", false}, // D starts no Canadian postal code
		{"CA", "12345", "", false},
		{"CA", "", "", false},
		{"MX", "06600", "06600", true},
		{"MX", "6600", "", false},
		{"GB", "sw1a1aa", "SW1A 1AA", true},
		{"GB", "EC1Y 8SY", "EC1Y 8SY", true},
		{"GB", "M11AA", "M1 1AA", true},
		{"GB", "GIR0AA", "GIR 0AA", true},
		{"GB", "QQ1 1AA", "", false},
		{"GB", "12345", "", false},
		{"DE", "10115", "10115", true},
		{"DE", "1011", "", false},
		{"FR", "75001", "75001", true},
		{"FR", "7500", "", false},
		{"AU", "2000", "2000", true},
		{"AU", "200", "", false},
		{"JP", "1000001", "100-0001", true},
		{"JP", "100-0001", "100-0001", true},
		{"JP", "100 0001", "100-0001", true},
		{"JP", "10000", "", false},
		{"NL", "1012ab", "1012 AB", true},
		{"NL", "0123 AB", "", false},
		{"NL", "1012 SA", "", false}, // SA, SD and SS are not used
		{"IT", "00144", "00144", true},
		{"IT", "0014", "", false},
		{"ES", "28039", "28039", true},
		{"ES", "280390", "", false},
		{"BR", "40301110", "40301-110", true},
		{"IE", "", "", true}, // Eircodes are optional
		{"IE", "a65f4e2", "A65 F4E2", true},
		{"HK", "", "", true}, // no postal codes
		{"AE", "", "", true},
		{"HK", " Kowloon  Bay ", "KOWLOON BAY", true},
	} {
		c, ok := LookupCountry(tc.country)
		if !ok {
			t.Fatalf("LookupCountry(%q) failed", tc.country)
		}
		got, ok := c.NormalizePostalCode(tc.zip)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s NormalizePostalCode(%q) = %q, %v; want %q, %v", tc.country, tc.zip, got, ok, tc.want, tc.ok)
		}
	}
}

func TestStateRequired(t *testing.T) {
	for _, tc := range []struct {
		country string
		want    bool
	}{
		{"US", true}, {"CA", true}, {"AU", true}, {"MX", true}, {"JP", true}, {"us", true},
		{"GB", false}, {"DE", false}, {"FR", false}, {"NL", false},
	} {
		if c, _ := LookupCountry(tc.country); c.StateRequired != tc.want {
			t.Errorf("LookupCountry(%q).StateRequired = %v; want %v", tc.country, c.StateRequired, tc.want)
		}
	}
}

// TestLookupState: a state is found by its code, its ISO 3166-2 code or its name, in any case
// and with or without accents, and only among the country's own subdivisions.
func TestLookupState(t *testing.T) {
	for _, tc := range []struct {
		country, state, want string // want "" for no subdivision
	}{
		{"CA", "ON", "ON"},
		{"CA", "on", "ON"},
		{"CA", "Ontario", "ON"},
		{"CA", "ONTARIO", "ON"},
		{"CA", "CA-ON", "ON"},
		{"CA", "quebec", "QC"},
		{"CA", "Québec", "QC"},
		{"CA", "ca-qc", "QC"},
		{"CA", "XX", ""},
		{"CA", "", ""},
		{"US", "CA", "CA"},
		{"US", "New York", "NY"},
		{"US", "ZZ", ""},
		{"AU", "NSW", "NSW"},
		{"AU", "New South Wales", "NSW"},
		{"AU", "NSX", ""},
		{"MX", "CMX", "CMX"},
		{"MX", "JAL", "JAL"},
		{"MX", "XYZ", ""},
		{"MX", "Ciudad de Mexico", "CMX"},
		{"MX", "CIUDAD DE MÉXICO", "CMX"},
		{"JP", "13", "13"},
		{"JP", "Tokyo", "13"},
		{"JP", "Edo", ""},
		{"BR", "Amapa", "AP"},
		{"HK", "Kowloon", "Kowloon"},
		{"HK", "Lantau", ""},
		{"GB", "England", ""}, // no subdivisions listed
	} {
		c, _ := LookupCountry(tc.country)
		if s, ok := c.LookupState(tc.state); s.Code != tc.want || ok != (tc.want != "") {
			t.Errorf("%s LookupState(%q) = %q, %v; want %q", tc.country, tc.state, s.Code, ok, tc.want)
		}
	}
}

func TestPostalCodeInState(t *testing.T) {
	for _, tc := range []struct {
		country, state, zip string
		want                bool
	}{
		{"CA", "ON", "M5H 2N2", true},
		{"CA", "BC", "M5H 2N2", false},
		{"CA", "QC", "h3z2y7", true},
		{"US", "CA", "90012", true},
		{"US", "NY", "90012", false},
		{"AU", "NSW", "2000", true},
		{"AU", "VIC", "2000", false},
		{"JP", "13", "100-0001", true},
		{"JP", "Tokyo", "0600001", false}, // Sapporo
		{"MX", "CMX", "06600", true},
		{"GB", "", "SW1A 1AA", true},    // no subdivisions
		{"CA", "XX", "M5H 2N2", true},   // unknown state: reported by LookupState
		{"CA", "ON", "not a zip", true}, // bad postal code: reported by NormalizePostalCode
	} {
		c, _ := LookupCountry(tc.country)
		if got := c.PostalCodeInState(tc.state, tc.zip); got != tc.want {
			t.Errorf("%s PostalCodeInState(%q, %q) = %v; want %v", tc.country, tc.state, tc.zip, got, tc.want)
		}
	}
}

func TestParseCountriesRejectsBadLines(t *testing.T) {
	for _, data := range []string{
		"CA\tCanada\tSZ\n",                  // too few fields
		"XX-ON\tOntario\t\n",                // subdivision before its country
		"CA\tCanada\tSZ\t[\tH3Z 2Y7\n",      // bad pattern
		"CA\tCanada\tSZ\t\t\nUS-NY\tNY\t\n", // subdivision of another country
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("parseCountries(%q) did not panic", data)
				}
			}()
			parseCountries(data)
		}()
	}
	if got := parseCountries("# comment\nCA\tCanada\tSZ\t\\d\t1\nCA-ON\tOntario\tK\n"); len(got) != 1 || len(got["CA"].Subdivisions) != 1 || strings.Join(got["CA"].examples, ",") != "1" {
		t.Errorf("parseCountries(one country) = %v", got)
	}
}
