package billing

import (
	"fmt"
	"time"
)

// Period is how often an account is invoiced. Days are UTC days.
type Period string

const (
	// Monthly periods are calendar months: the first to the last day.
	Monthly Period = "MONTHLY"
	// Weekly periods run Monday to Sunday.
	Weekly Period = "WEEKLY"
)

// DateLayout is the layout of invoice dates.
const DateLayout = "2006-01-02"

// Profile is an account's billing profile: one per account, created with it.
type Profile struct {
	AccountID    string
	Currency     string
	Period       Period
	NetTermsDays int
	// BillToName and BillToAddress are whom the invoices are addressed to; while unset the
	// documents show the account's name.
	BillToName    string
	BillToAddress *Address
}

// DefaultProfile is the profile a new account gets.
func DefaultProfile(accountID string) Profile {
	return Profile{AccountID: accountID, Currency: "USD", Period: Monthly, NetTermsDays: 15}
}

// Valid reports whether p is a known period.
func (p Period) Valid() bool { return p == Monthly || p == Weekly }

// Bounds returns the first and last day (inclusive, at 00:00 UTC) of the period containing t.
func (p Period) Bounds(t time.Time) (start, end time.Time) {
	d := Day(t)
	switch p {
	case Weekly:
		// time.Weekday counts from Sunday; periods start on Monday.
		back := (int(d.Weekday()) + 6) % 7
		start = d.AddDate(0, 0, -back)
		return start, start.AddDate(0, 0, 6)
	default:
		start = time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, -1)
	}
}

// Day is t's UTC day at 00:00.
func Day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Date formats a day as YYYY-MM-DD.
func Date(t time.Time) string { return t.UTC().Format(DateLayout) }

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (time.Time, error) {
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad date %q", s)
	}
	return t, nil
}

// DueDate is the date an invoice issued on invoiceDate is due under net terms of netDays.
func DueDate(invoiceDate time.Time, netDays int) time.Time {
	return Day(invoiceDate).AddDate(0, 0, netDays)
}
