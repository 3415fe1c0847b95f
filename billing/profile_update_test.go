package billing

import (
	"context"
	"errors"
	"testing"
	"time"
)

// profileBooks is Books over one account's profile and invoices; a transaction's save is kept
// only when it commits.
type profileBooks struct {
	Books
	profile  Profile
	invoices []Invoice
}

type profileLedger struct {
	Ledger
	b     *profileBooks
	saved *Profile
}

func (b *profileBooks) BillingTx(ctx context.Context, fn func(context.Context, Ledger) error) error {
	l := &profileLedger{b: b}
	if err := fn(ctx, l); err != nil {
		return err
	}
	if l.saved != nil {
		b.profile = *l.saved
	}
	return nil
}

func (l *profileLedger) LockProfile(ctx context.Context, accountID string) (Profile, error) {
	return l.b.profile, nil
}

func (l *profileLedger) InvoicesFrom(ctx context.Context, accountID string, start time.Time) ([]Invoice, error) {
	return l.b.invoices, nil
}

func (l *profileLedger) SaveProfile(ctx context.Context, p Profile) error {
	l.saved = &p
	return nil
}

// TestUpdateProfile: a change keeps the account, currency and net terms; the bill-to is
// normalized and checked; the period changes only while the account has no invoice, and the
// same period again is no change; a refused change stores nothing.
func TestUpdateProfile(t *testing.T) {
	ctx := context.Background()
	boston := &Address{Street1: "1 Main St", City: "Boston", State: "ma", Zip: "02101", Country: "us"}
	tests := []struct {
		name     string
		invoices []Invoice
		change   func(*Profile)
		want     func(Profile) bool
		wantErr  error // nil: any error when want is nil
	}{
		{"bill-to normalized", nil, func(p *Profile) { p.BillToName, p.BillToAddress = "  Acme LLC ", boston },
			func(p Profile) bool {
				return p.BillToName == "Acme LLC" && p.BillToAddress.State == "MA" && p.BillToAddress.Country == "US"
			}, nil},
		{"fixed fields kept", nil, func(p *Profile) { p.AccountID, p.Currency, p.NetTermsDays = "other", "EUR", 90 },
			func(p Profile) bool { return p.AccountID == "acct" && p.Currency == "USD" && p.NetTermsDays == 30 }, nil},
		{"period before any invoice", nil, func(p *Profile) { p.Period = Weekly },
			func(p Profile) bool { return p.Period == Weekly }, nil},
		{"period with an invoice", []Invoice{{ID: "inv1"}}, func(p *Profile) { p.Period = Weekly }, nil, ErrInvalidState},
		{"same period with an invoice", []Invoice{{ID: "inv1"}}, func(p *Profile) { p.Period, p.BillToName = Monthly, "X" },
			func(p Profile) bool { return p.Period == Monthly && p.BillToName == "X" }, nil},
		{"unknown period", nil, func(p *Profile) { p.Period = "DAILY" }, nil, nil},
		{"address without a city", nil, func(p *Profile) { p.BillToAddress = &Address{Street1: "1 Main St", Country: "US"} }, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := DefaultProfile("acct")
			start.NetTermsDays = 30
			books := &profileBooks{profile: start, invoices: tt.invoices}
			s := &Service{Books: books, Now: time.Now}
			got, err := s.UpdateProfile(ctx, "acct", tt.change)
			if tt.want == nil {
				if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("UpdateProfile = %+v, %v; want an error %v", got, err, tt.wantErr)
				}
				if books.profile.Period != start.Period || books.profile.BillToName != start.BillToName || books.profile.BillToAddress != nil {
					t.Errorf("a refused change stored %+v", books.profile)
				}
				return
			}
			if err != nil || !tt.want(got) || !tt.want(books.profile) {
				t.Fatalf("UpdateProfile = %+v, %v; stored %+v", got, err, books.profile)
			}
		})
	}
}
