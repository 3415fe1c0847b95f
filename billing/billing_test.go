package billing

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

func TestNext(t *testing.T) {
	tests := []struct {
		from   Status
		action Action
		want   Status // "" means the move is refused
	}{
		{Draft, Finalize, Open},
		{Draft, Pay, ""},
		{Draft, MarkUncollectible, ""},
		{Draft, VoidInvoice, ""},
		{Open, Finalize, ""},
		{Open, Pay, Paid},
		{Open, MarkUncollectible, Uncollectible},
		{Open, VoidInvoice, Void},
		{Uncollectible, Finalize, ""},
		{Uncollectible, Pay, Paid},
		{Uncollectible, MarkUncollectible, ""},
		{Uncollectible, VoidInvoice, Void},
		{Paid, Finalize, ""},
		{Paid, Pay, ""},
		{Paid, MarkUncollectible, ""},
		{Paid, VoidInvoice, ""},
		{Void, Finalize, ""},
		{Void, Pay, ""},
		{Void, MarkUncollectible, ""},
		{Void, VoidInvoice, ""},
		{Open, "refund", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"/"+string(tt.action), func(t *testing.T) {
			got, err := Next(tt.from, tt.action)
			if tt.want == "" {
				if !errors.Is(err, ErrInvalidState) {
					t.Errorf("Next(%q, %q) = %q, %v; want ErrInvalidState", tt.from, tt.action, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Next(%q, %q) = %q, %v; want %q", tt.from, tt.action, got, err, tt.want)
			}
		})
	}
}

func TestEditable(t *testing.T) {
	for _, s := range Statuses {
		if got, want := Editable(s), s == Draft; got != want {
			t.Errorf("Editable(%q) = %v; want %v", s, got, want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{{"DRAFT", true}, {"OPEN", true}, {"PAID", true}, {"UNCOLLECTIBLE", true}, {"VOID", true},
		{"draft", false}, {"", false}, {"CLOSED", false}}
	for _, tt := range tests {
		if _, ok := ParseStatus(tt.in); ok != tt.ok {
			t.Errorf("ParseStatus(%q) ok = %v; want %v", tt.in, ok, tt.ok)
		}
	}
}

func day(s string) time.Time {
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestPeriodBounds(t *testing.T) {
	tests := []struct {
		period     Period
		at         time.Time
		start, end string
	}{
		{Monthly, time.Date(2026, 11, 22, 3, 42, 3, 0, time.UTC), "2026-11-01", "2026-11-30"},
		{Monthly, time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC), "2026-12-01", "2026-12-31"},
		{Monthly, time.Date(2028, 2, 10, 0, 0, 0, 0, time.UTC), "2028-02-01", "2028-02-29"}, // leap year
		{Monthly, time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC), "2027-02-01", "2027-02-28"},
		{Monthly, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "2026-01-01", "2026-01-31"},
		// Days are UTC days: 20:00 on Nov 30 in New York is already December.
		{Monthly, time.Date(2026, 11, 30, 20, 0, 0, 0, time.FixedZone("EST", -5*3600)), "2026-12-01", "2026-12-31"},
		{Weekly, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), "2026-11-16", "2026-11-22"}, // a Sunday
		{Weekly, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), "2026-11-23", "2026-11-29"}, // a Monday
		{Weekly, time.Date(2026, 12, 30, 9, 0, 0, 0, time.UTC), "2026-12-28", "2027-01-03"}, // across the year
		{Weekly, time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), "2026-11-23", "2026-11-29"},
	}
	for _, tt := range tests {
		start, end := tt.period.Bounds(tt.at)
		if Date(start) != tt.start || Date(end) != tt.end {
			t.Errorf("%s.Bounds(%v) = %s, %s; want %s, %s", tt.period, tt.at, Date(start), Date(end), tt.start, tt.end)
		}
		if start.Weekday() != time.Monday && tt.period == Weekly {
			t.Errorf("%s.Bounds(%v) starts on %v; want Monday", tt.period, tt.at, start.Weekday())
		}
	}
}

// TestPeriodsTile checks that consecutive periods neither overlap nor leave gaps.
func TestPeriodsTile(t *testing.T) {
	for _, p := range []Period{Monthly, Weekly} {
		at := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
		_, prevEnd := p.Bounds(at.AddDate(0, 0, -1))
		for i := 0; i < 800; i++ {
			start, end := p.Bounds(at)
			if start.After(at) || end.Before(Day(at)) {
				t.Fatalf("%s.Bounds(%v) = %v, %v; does not contain it", p, at, start, end)
			}
			if start != Day(at) && start != prevEnd.AddDate(0, 0, 1) && start.After(prevEnd) {
				t.Fatalf("%s: gap before %v", p, start)
			}
			_, prevEnd = start, end
			at = at.AddDate(0, 0, 1)
		}
	}
}

func TestDueDate(t *testing.T) {
	tests := []struct {
		date string
		net  int
		want string
	}{{"2026-12-01", 15, "2026-12-16"}, {"2026-12-20", 15, "2027-01-04"}, {"2028-02-20", 15, "2028-03-06"}}
	for _, tt := range tests {
		if got := Date(DueDate(day(tt.date), tt.net)); got != tt.want {
			t.Errorf("DueDate(%s, %d) = %s; want %s", tt.date, tt.net, got, tt.want)
		}
	}
}

func TestNumber(t *testing.T) {
	tests := []struct {
		year int
		seq  int64
		want string
	}{{2026, 42, "INV-2026-000042"}, {2026, 1, "INV-2026-000001"}, {2027, 1234567, "INV-2027-1234567"}}
	for _, tt := range tests {
		if got := Number(tt.year, tt.seq); got != tt.want {
			t.Errorf("Number(%d, %d) = %q; want %q", tt.year, tt.seq, got, tt.want)
		}
	}
}

func TestValidateFee(t *testing.T) {
	tests := []struct {
		desc   string
		amount int64
		fields []string
	}{
		{"Monthly platform fee", 2500, nil},
		{"Goodwill credit", -1000, nil},
		{"", 100, []string{"description"}},
		{"   ", 100, []string{"description"}},
		{strings.Repeat("x", MaxDescription+1), 100, []string{"description"}},
		{"Fee", 0, []string{"amount_cents"}},
		{"Fee", MaxFeeCents + 1, []string{"amount_cents"}},
		{"Fee", -MaxFeeCents - 1, []string{"amount_cents"}},
		{"", 0, []string{"description", "amount_cents"}},
	}
	for _, tt := range tests {
		err := ValidateFee(tt.desc, tt.amount)
		var got []string
		var ve *shipping.ValidationError
		if errors.As(err, &ve) {
			for _, f := range ve.Fields {
				got = append(got, f.Field)
			}
		} else if err != nil {
			t.Fatalf("ValidateFee(%q, %d) = %v; want a ValidationError", tt.desc, tt.amount, err)
		}
		if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
			t.Errorf("ValidateFee(%q, %d) fields = %v; want %v", tt.desc, tt.amount, got, tt.fields)
		}
	}
}

func TestMoney(t *testing.T) {
	tests := []struct {
		cents int64
		want  string
	}{{0, "$0.00"}, {5, "$0.05"}, {745, "$7.45"}, {123456, "$1,234.56"}, {-5, "-$0.05"},
		{100000000, "$1,000,000.00"}, {-123456789, "-$1,234,567.89"}}
	for _, tt := range tests {
		if got := Money(tt.cents); got != tt.want {
			t.Errorf("Money(%d) = %q; want %q", tt.cents, got, tt.want)
		}
	}
}

func TestTotal(t *testing.T) {
	items := []LineItem{{TotalCents: 745}, {TotalCents: -100}, {TotalCents: 2500}}
	if got := Total(items); got != 3145 {
		t.Errorf("Total = %d; want 3145", got)
	}
	if got := Total(nil); got != 0 {
		t.Errorf("Total(nil) = %d; want 0", got)
	}
}

func str(s string) *string { return &s }

func sampleInvoice(n int) (Invoice, []LineItem) {
	at := time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	inv := Invoice{ID: "00000000-0000-7000-8000-000000000001", Status: Open, Currency: "USD", Number: "INV-2026-000007",
		PeriodStart: "2026-11-01", PeriodEnd: "2026-11-30", InvoiceDate: "2026-12-01", DueDate: "2026-12-16", DeferredCents: 1234}
	var items []LineItem
	for i := range n {
		retail := int64(900 + i)
		it := LineItem{ID: "item-" + strconv.Itoa(i), Type: Postage, Carrier: str("ACME"), Service: str("REGEA"),
			TrackingCode: str("1Z" + strconv.Itoa(100000+i)), Description: PostageDescription("ACME", "REGEA", "1Z"+strconv.Itoa(100000+i)),
			PostageCents: 700, SurchargesCents: 45 + int64(i%3), RetailCents: &retail, PurchasedAt: &shipping.Timestamp{Time: at}, ShippingLabelStatus: str("DELIVERED"),
			CreatedAt: shipping.Timestamp{Time: at.Add(time.Duration(i) * time.Minute)}}
		it.TotalCents = it.PostageCents + it.SurchargesCents
		if i%7 == 3 {
			it = LineItem{ID: "item-" + strconv.Itoa(i), Type: Fee, Description: "=HYPERLINK(\"x\") platform fee",
				TotalCents: -250, CreatedAt: shipping.Timestamp{Time: at.Add(time.Duration(i) * time.Minute)}}
		}
		items = append(items, it)
	}
	inv.TotalCents = Total(items)
	return inv, items
}

func TestWriteCSV(t *testing.T) {
	for _, n := range []int{0, 1, 20} {
		_, items := sampleInvoice(n)
		var b bytes.Buffer
		if err := WriteCSV(&b, items); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatalf("reading the CSV back: %v", err)
		}
		// Exactly the header and one row per line item: no total or summary row.
		if got, want := len(rows), len(items)+1; got != want {
			t.Fatalf("CSV of %d items has %d rows; want %d (header, one per item)", n, got, want)
		}
		if strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
			t.Errorf("header = %v; want %v", rows[0], CSVHeader)
		}
		col := len(CSVHeader) - 1
		for i, r := range rows[1:] {
			got, err := strconv.ParseInt(r[col], 10, 64)
			if err != nil {
				t.Fatalf("row %d total_cents %q: %v", i+1, r[col], err)
			}
			if r[0] != items[i].ID || got != items[i].TotalCents {
				t.Errorf("row %d = %s, %d; want %s, %d", i+1, r[0], got, items[i].ID, items[i].TotalCents)
			}
			if strings.HasPrefix(r[3], "=") {
				t.Errorf("row %d description %q starts a formula", i+1, r[3])
			}
		}
	}
}

func sampleStatement(n int) Statement {
	inv, items := sampleInvoice(n)
	return Statement{Invoice: inv, Account: Account{ID: "acct-1", Name: "Acme (Ünïcode) \\ Corp", Brand: "Acme"},
		Profile: Profile{NetTermsDays: 15, BillToName: "Acme Fulfillment LLC",
			BillToAddress: &Address{Street1: "100 Commerce Way", Street2: "Suite 200", City: "Reno", State: "NV", Zip: "89502", Country: "US"}},
		Items: items}
}

var sampleRenderer = Renderer{Issuer: Issuer{Name: "Waybill Logistics Inc.", Address: []string{"1 Harbor Blvd", "Oakland, CA 94607", "billing@waybill.example"}},
	ServiceName: func(carrier, service string) string {
		if service == "REGEA" {
			return "Regional Economy Air"
		}
		return ""
	}}

// TestRenderPDF renders invoices of several sizes and, where pdftoppm is installed, checks
// that a real PDF reader renders every page.
func TestRenderPDF(t *testing.T) {
	for _, n := range []int{0, 3, 120, 600} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			st := sampleStatement(n)
			doc := sampleRenderer.PDF(st)
			if !bytes.HasPrefix(doc, []byte("%PDF-")) {
				t.Fatalf("PDF output starts %q; want %%PDF-", doc[:min(8, len(doc))])
			}
			if again := sampleRenderer.PDF(sampleStatement(n)); !bytes.Equal(doc, again) {
				t.Error("PDF is not deterministic")
			}
			got := renderPages(t, doc, 30)
			if got == nil {
				return
			}
			// Postage rows take two lines, fees one: 20 to 30 rows fit a page.
			if lo, hi := 1+n/30, 2+n/20; len(got) < lo || len(got) > hi {
				t.Errorf("PDF of %d items has %d pages; want %d to %d", n, len(got), lo, hi)
			}
		})
	}
}

// TestPDFContent checks what the invoice PDF says: letterhead, bill-to, terms, full
// descriptions with the service's name, deferred postage as a note beside the total, and no
// status (the document stays true after the invoice is paid or voided).
func TestPDFContent(t *testing.T) {
	st := sampleStatement(3)
	text := pdfText(sampleRenderer.PDF(st))
	for _, want := range []string{"Waybill Logistics Inc.", "1 Harbor Blvd", "billing@waybill.example",
		"Acme Fulfillment LLC", "100 Commerce Way", "Suite 200", "Reno, NV 89502", "Account acct-1",
		"INV-2026-000007", "Net 15", "2026-12-16", "2026-11-01 to 2026-11-30",
		"Postage: ACME Regional Economy Air", "tracking 1Z100000, purchased 2026-11-05, postage $7.00, surcharges $0.45",
		"Total due (USD)", Money(st.Invoice.TotalCents), "Note: deferred postage", "Postage of $12.34 for labels purchased on or before 2026-11-30",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("invoice PDF lacks %q; it says:\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"OPEN", "Status", "Deferred (in transit)"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("invoice PDF says %q", unwanted)
		}
	}
	// Without a bill-to name the account's name and brand are printed; without a service name,
	// the code.
	st.Profile = Profile{NetTermsDays: 30}
	st.Invoice.DeferredCents = 0
	text = pdfText(Renderer{}.PDF(st))
	for _, want := range []string{"Waybill", "Acme (Ünïcode) \\ Corp (Acme)", "Net 30", "Postage: ACME REGEA"} {
		if !strings.Contains(text, want) {
			t.Errorf("invoice PDF lacks %q; it says:\n%s", want, text)
		}
	}
	if strings.Contains(text, "deferred") {
		t.Error("invoice PDF without deferred postage has a deferred note")
	}
}

// pdfText extracts the text shown by the document's Tj operators, one line each, decoding the
// escapes shipping/pdf writes (WinAnsi above ASCII as octal).
func pdfText(doc []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(doc), "\n") {
		start, end := strings.Index(line, "("), strings.LastIndex(line, ") Tj")
		if start < 0 || end < start {
			continue
		}
		s := line[start+1 : end]
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				if i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '7' {
					n, _ := strconv.ParseUint(s[i+1:i+4], 8, 8)
					b.WriteRune(rune(n)) // Latin-1 is WinAnsi for these letters
					i += 3
					continue
				}
				i++
				c = s[i]
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// renderPages renders doc with pdftoppm at dpi and returns the PNG files of its pages, or nil
// when pdftoppm is missing outside CI.
func renderPages(t *testing.T, doc []byte, dpi int) []string {
	t.Helper()
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftoppm is required in CI")
		}
		t.Log("pdftoppm not installed; not rendering")
		return nil
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-r", strconv.Itoa(dpi), "-png", in, filepath.Join(dir, "page")).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
	if len(pngs) == 0 {
		t.Fatal("pdftoppm rendered no page")
	}
	return pngs
}

func TestNormalizeBillTo(t *testing.T) {
	us := func(f func(a *Address)) *Address {
		a := &Address{Street1: " 1 Main St ", City: "Boston", State: "ma", Zip: "02101", Country: "us"}
		f(a)
		return a
	}
	tests := []struct {
		name   string
		p      Profile
		fields []string
	}{
		{"empty", Profile{}, nil},
		{"name only", Profile{BillToName: "Acme LLC"}, nil},
		{"US address", Profile{BillToName: "Acme", BillToAddress: us(func(*Address) {})}, nil},
		{"ZIP+4", Profile{BillToAddress: us(func(a *Address) { a.Zip = "02101-1234" })}, nil},
		{"foreign, no state or zip", Profile{BillToAddress: &Address{Street1: "Hauptstr. 1", City: "Berlin", Country: "DE"}}, nil},
		{"long name", Profile{BillToName: strings.Repeat("x", MaxBillToText+1)}, []string{"bill_to_name"}},
		{"control character", Profile{BillToName: "a\nb"}, []string{"bill_to_name"}},
		{"missing street, city, country", Profile{BillToAddress: &Address{}}, []string{"bill_to_address.street1", "bill_to_address.city", "bill_to_address.country"}},
		{"bad country", Profile{BillToAddress: us(func(a *Address) { a.Country = "USA" })}, []string{"bill_to_address.country"}},
		{"US without state and zip", Profile{BillToAddress: us(func(a *Address) { a.State, a.Zip = "", "" })}, []string{"bill_to_address.state", "bill_to_address.zip"}},
		{"US bad state and zip", Profile{BillToAddress: us(func(a *Address) { a.State, a.Zip = "Mass", "2101" })}, []string{"bill_to_address.state", "bill_to_address.zip"}},
		{"long street2", Profile{BillToAddress: us(func(a *Address) { a.Street2 = strings.Repeat("y", 201) })}, []string{"bill_to_address.street2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			err := NormalizeBillTo(&p)
			var got []string
			var ve *shipping.ValidationError
			if errors.As(err, &ve) {
				for _, f := range ve.Fields {
					got = append(got, f.Field)
				}
			} else if err != nil {
				t.Fatalf("NormalizeBillTo = %v; want a ValidationError", err)
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Errorf("NormalizeBillTo fields = %v; want %v", got, tt.fields)
			}
			if err == nil && p.BillToAddress != nil && (p.BillToAddress.Street1 != strings.TrimSpace(p.BillToAddress.Street1) ||
				p.BillToAddress.Country != strings.ToUpper(p.BillToAddress.Country) || p.BillToAddress.State != strings.ToUpper(p.BillToAddress.State)) {
				t.Errorf("NormalizeBillTo left %+v unnormalized", p.BillToAddress)
			}
		})
	}
}

func TestAddressLines(t *testing.T) {
	tests := []struct {
		a    Address
		want string
	}{
		{Address{Street1: "1 Main St", City: "Boston", State: "MA", Zip: "02101", Country: "US"}, "1 Main St|Boston, MA 02101"},
		{Address{Street1: "1 Main St", Street2: "Suite 2", City: "Boston", State: "MA", Zip: "02101", Country: "US"}, "1 Main St|Suite 2|Boston, MA 02101"},
		{Address{Street1: "Hauptstr. 1", City: "Berlin", Zip: "10115", Country: "DE"}, "Hauptstr. 1|Berlin, 10115|DE"},
		{Address{Street1: "1 Rue", City: "Monaco", Country: "MC"}, "1 Rue|Monaco|MC"},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.a.Lines(), "|"); got != tt.want {
			t.Errorf("Lines(%+v) = %q; want %q", tt.a, got, tt.want)
		}
	}
}

// TestPDFInAReader reads the invoice PDF back with pdftotext (poppler, as pdftoppm): a real
// reader finds the bill-to, the issuer, the terms, the full descriptions and the deferred
// note, in reading order.
func TestPDFInAReader(t *testing.T) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext (poppler-utils) is required in CI")
		}
		t.Skip("pdftotext not installed")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(in, sampleRenderer.PDF(sampleStatement(40)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", in, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Waybill Logistics Inc.", "INVOICE", "INV-2026-000007", "Net 15", "2026-12-16",
		"BILL TO", "Acme Fulfillment LLC", "Reno, NV 89502", "Postage: ACME Regional Economy Air",
		"tracking 1Z100039, purchased 2026-11-05", "Total due (USD)", "Note: deferred postage", "Page 2 of 2"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext finds no %q in:\n%s", want, text)
		}
	}
	if i, j := strings.Index(text, "Total due"), strings.Index(text, "deferred postage"); i < 0 || j < i {
		t.Error("the deferred note is not under the total")
	}
}
