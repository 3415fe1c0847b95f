package billing

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping"
)

// Address is a postal address invoices are addressed to. It is not a shipping address: it is
// printed, never rated, so only its form is checked.
type Address struct {
	Street1 string `json:"street1"`
	Street2 string `json:"street2"`
	City    string `json:"city"`
	State   string `json:"state"`
	Zip     string `json:"zip"`
	Country string `json:"country"`
}

// Lines is the address as printed: street lines, then "City, ST 12345", then the country
// unless it is US.
func (a Address) Lines() []string {
	lines := []string{a.Street1}
	if a.Street2 != "" {
		lines = append(lines, a.Street2)
	}
	city := a.City
	if rest := strings.TrimSpace(a.State + " " + a.Zip); rest != "" {
		city += ", " + rest
	}
	lines = append(lines, city)
	if a.Country != "US" {
		lines = append(lines, a.Country)
	}
	return lines
}

// MaxBillToText bounds bill_to_name and each bill-to address field, in characters.
const MaxBillToText = 200

// NormalizeBillTo trims a profile's bill-to fields (upper-casing state and country) and
// checks them: a name of at most MaxBillToText characters without control characters; an
// address with street1, city and a two-letter country, and for the US a two-letter state and
// a ZIP code (12345 or 12345-6789).
func NormalizeBillTo(p *Profile) error {
	var v shipping.ValidationError
	p.BillToName = strings.TrimSpace(p.BillToName)
	checkBillToText(&v, "bill_to_name", p.BillToName)
	if a := p.BillToAddress; a != nil {
		for _, s := range []*string{&a.Street1, &a.Street2, &a.City, &a.State, &a.Zip, &a.Country} {
			*s = strings.TrimSpace(*s)
		}
		a.State, a.Country = strings.ToUpper(a.State), strings.ToUpper(a.Country)
		for _, f := range []struct{ name, value string }{{"street1", a.Street1}, {"city", a.City}, {"country", a.Country}} {
			if f.value == "" {
				v.Add("bill_to_address."+f.name, "required", "is required")
			}
		}
		for _, f := range []struct{ name, value string }{{"street1", a.Street1}, {"street2", a.Street2}, {"city", a.City},
			{"state", a.State}, {"zip", a.Zip}} {
			checkBillToText(&v, "bill_to_address."+f.name, f.value)
		}
		if a.Country != "" && !upperLetters(a.Country, 2) {
			v.Add("bill_to_address.country", "invalid", "must be a two-letter country code")
		}
		if a.Country == "US" {
			switch {
			case a.State == "":
				v.Add("bill_to_address.state", "required", "is required for a US address")
			case !upperLetters(a.State, 2):
				v.Add("bill_to_address.state", "invalid", "must be a two-letter state code")
			}
			switch {
			case a.Zip == "":
				v.Add("bill_to_address.zip", "required", "is required for a US address")
			case !usZIP(a.Zip):
				v.Add("bill_to_address.zip", "invalid", "must be a ZIP code, 12345 or 12345-6789")
			}
		}
	}
	return v.Err()
}

func checkBillToText(v *shipping.ValidationError, field, s string) {
	if utf8.RuneCountInString(s) > MaxBillToText {
		v.Add(field, "too_long", "must be at most 200 characters")
	} else if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }) {
		v.Add(field, "invalid", "must not contain control characters")
	}
}

func upperLetters(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range n {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// usZIP accepts 12345 and 12345-6789.
func usZIP(s string) bool {
	digits := func(s string) bool {
		for i := range len(s) {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	switch len(s) {
	case 5:
		return digits(s)
	case 10:
		return s[5] == '-' && digits(s[:5]) && digits(s[6:])
	}
	return false
}

// UpdateProfile changes the account's billing profile as change says, in one transaction that
// locks it first: two changes of different fields do not undo each other, and the account's
// first invoice is not made under the old period meanwhile. The account, currency and net terms
// stay as they are; the bill-to is normalized and checked (NormalizeBillTo). Invoice periods
// never overlap, so the period changes only while the account has no invoice (ErrInvalidState
// after); the same period again is no change.
func (s *Service) UpdateProfile(ctx context.Context, accountID string, change func(*Profile)) (Profile, error) {
	var p Profile
	err := s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
		old, err := l.LockProfile(ctx, accountID)
		if err != nil {
			return err
		}
		p = old
		if old.BillToAddress != nil {
			a := *old.BillToAddress
			p.BillToAddress = &a
		}
		change(&p)
		p.AccountID, p.Currency, p.NetTermsDays = old.AccountID, old.Currency, old.NetTermsDays
		if !p.Period.Valid() {
			return fmt.Errorf("billing: unknown billing period %q", p.Period)
		}
		if err := NormalizeBillTo(&p); err != nil {
			return err
		}
		if p.Period != old.Period {
			invoices, err := l.InvoicesFrom(ctx, accountID, time.Time{})
			if err != nil {
				return err
			}
			if len(invoices) > 0 {
				return fmt.Errorf("%w: the billing period cannot change once the account has invoices", ErrInvalidState)
			}
		}
		return l.SaveProfile(ctx, p)
	})
	return p, err
}
