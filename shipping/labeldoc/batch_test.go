package labeldoc

import "testing"

func TestBatchDocumentFormat(t *testing.T) {
	tests := []struct {
		formats []string
		want    string
	}{
		{nil, "PDF"},
		{[]string{"ZPL"}, "ZPL"},
		{[]string{"ZPL", "ZPL"}, "ZPL"},
		{[]string{"ZPL", "PDF"}, "PDF"},
		{[]string{"PNG"}, "PDF"},
		{[]string{"PDF", "PNG"}, "PDF"},
	}
	for _, tt := range tests {
		if got := BatchDocumentFormat(tt.formats); got != tt.want {
			t.Errorf("BatchDocumentFormat(%v) = %s; want %s", tt.formats, got, tt.want)
		}
	}
}
