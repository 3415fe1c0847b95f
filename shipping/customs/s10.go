package customs

import (
	"strconv"
	"strings"
)

// S10Number is the UPU S10 identifier of serial: the two-letter service indicator, the serial
// as 8 digits, its check digit and the issuing post's ISO country code, e.g.
// S10Number("EE", 12345678, "US") = "EE123456785US". It returns "" when the indicator or the
// country is not two capital letters or the serial is outside 0–99,999,999.
func S10Number(indicator string, serial int64, country string) string {
	if !upper2(indicator) || !upper2(country) || serial < 0 || serial > 99_999_999 {
		return ""
	}
	s := strconv.FormatInt(serial, 10)
	s = strings.Repeat("0", 8-len(s)) + s
	return indicator + s + string(s10Check(s)) + country
}

// ValidS10 reports whether code is a UPU S10 identifier: two capital letters, 8 digits, the
// right check digit and the ISO 3166-1 code of the issuing post's country.
func ValidS10(code string) bool {
	if len(code) != 13 || !upper2(code[:2]) || !allDigits(code[2:11]) {
		return false
	}
	if _, ok := LookupCountry(code[11:]); !ok || !upper2(code[11:]) {
		return false
	}
	return s10Check(code[2:10]) == code[10]
}

// GroupS10 is an S10 identifier as posts print it for people: "EE 123 456 785 US".
func GroupS10(code string) string {
	if len(code) != 13 {
		return code
	}
	return code[:2] + " " + code[2:5] + " " + code[5:8] + " " + code[8:11] + " " + code[11:]
}

// s10Weights weigh the serial's digits, left to right.
var s10Weights = [8]int{8, 6, 4, 2, 3, 5, 9, 7}

// s10Check is the check digit of an 8-digit serial: 11 − (the weighted sum mod 11), where 10
// becomes 0 and 11 becomes 5.
func s10Check(serial string) byte {
	sum := 0
	for i, w := range s10Weights {
		sum += int(serial[i]-'0') * w
	}
	switch c := 11 - sum%11; c {
	case 10:
		return '0'
	case 11:
		return '5'
	default:
		return byte('0' + c)
	}
}

func upper2(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

func allDigits(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}
