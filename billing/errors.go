// Package billing holds waybill's billing domain: billing profiles, invoices and their line
// items, the invoice lifecycle, the period closer and invoice documents.
package billing

import "errors"

// ErrInvalidState reports an invoice transition or edit that the invoice's status forbids.
var ErrInvalidState = errors.New("invalid state")
