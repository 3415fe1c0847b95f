package shipping

import (
	"math"
	"slices"
)

// Insurance limits: a label may be insured for more than $0 and at most $5,000 (compat).
const MaxInsuredCents = 5000_00

// Insurance pricing: InsuranceRateCents per InsuranceStepCents of declared value or part of it,
// so $100 costs $0.85, $100.01 $1.70 and $5,000 $42.50.
const (
	InsuranceRateCents = 85
	InsuranceStepCents = 100_00
)

// SurchargeInsurance is the surcharge type insurance is priced as.
const SurchargeInsurance = "INSURANCE"

// InsuredCents checks an insurance_amount as a client sends it (USD, e.g. 250 or 99.95) and
// returns it in cents: above 0, at most 5,000, in whole cents.
func InsuredCents(amount float64) (int64, error) {
	var v ValidationError
	cents := math.Round(amount * 100)
	switch {
	case !(amount > 0):
		v.Add("insurance_amount", "not_positive", "must be greater than 0")
	case cents > MaxInsuredCents:
		v.Add("insurance_amount", "too_large", "must be at most 5000")
	case math.Abs(amount*100-cents) > 1e-6 || cents < 1: // 1e-9 rounds to no cent at all
		v.Add("insurance_amount", "invalid", "must be in whole cents")
	}
	if err := v.Err(); err != nil {
		return 0, err
	}
	return int64(cents), nil
}

// InsuranceCents is what insuring insuredCents of declared value costs; 0 for none.
func InsuranceCents(insuredCents int64) int64 {
	if insuredCents <= 0 {
		return 0
	}
	steps := (insuredCents + InsuranceStepCents - 1) / InsuranceStepCents
	return steps * InsuranceRateCents
}

// Insured returns the rate as bought with insurance costing chargeCents: the charge is one more
// surcharge (INSURANCE), added to its surcharges, total, price and retail price. Without a
// charge it returns r unchanged. r's own surcharges are not modified.
func (r Rate) Insured(chargeCents int64) Rate {
	if chargeCents <= 0 {
		return r
	}
	r.SurchargesCents += chargeCents
	r.TotalCents += chargeCents
	r.RetailCents += chargeCents
	r.Price = USD(r.TotalCents)
	r.RateMetadata.SurchargesMetadata = append(slices.Clip(r.RateMetadata.SurchargesMetadata),
		SurchargeMetadata{SurchargeType: SurchargeInsurance, Surcharge: USD(chargeCents)})
	return r
}
