package billing

import "bytes"

// Issuer is who issues the invoices: the letterhead of the invoice PDF.
type Issuer struct {
	Name string
	// Address is printed under the name, one line each (street, city, a tax id, an email…).
	Address []string
}

// DefaultIssuer is the letterhead unless the operator configures one.
var DefaultIssuer = Issuer{Name: "Waybill"}

// Statement is everything an invoice's documents show, read when the invoice is finalized:
// the invoice, the account and its billing profile (bill-to, net terms) and the live line items,
// oldest first.
type Statement struct {
	Invoice Invoice
	Account Account
	Profile Profile
	Items   []LineItem
}

// Documents are an invoice's rendered documents.
type Documents struct {
	PDF, CSV []byte
}

// Renderer draws invoice documents. The zero value prints DefaultIssuer and service codes.
type Renderer struct {
	Issuer Issuer
	// ServiceName gives a carrier service's human name ("Ground Advantage" for
	// GROUND_ADVANTAGE), or "" when it has none; nil prints the codes.
	ServiceName func(carrier, service string) string
}

// Render draws both documents. The same statement gives the same bytes.
func (r Renderer) Render(st Statement) (Documents, error) {
	var b bytes.Buffer
	if err := WriteCSV(&b, st.Items); err != nil {
		return Documents{}, err
	}
	return Documents{PDF: r.PDF(st), CSV: b.Bytes()}, nil
}

func (r Renderer) issuer() Issuer {
	if r.Issuer.Name == "" && len(r.Issuer.Address) == 0 {
		return DefaultIssuer
	}
	return r.Issuer
}

func (r Renderer) serviceName(carrier, service string) string {
	if r.ServiceName != nil {
		if name := r.ServiceName(carrier, service); name != "" {
			return name
		}
	}
	return service
}
