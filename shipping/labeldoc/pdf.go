package labeldoc

import (
	"unicode/utf8"

	"github.com/waybill/waybill/shipping/pdf"
)

// PDF draws the label as a 4 × 6 in PDF: one page, and an international label's customs
// declaration on the pages after it.
func (d Document) PDF() ([]byte, error) {
	return LabelsPDF([]Document{d})
}

// addPages draws the label, and its customs declaration when it has one, on new pages of doc.
func (d Document) addPages(doc *pdf.Document) error {
	if err := d.draw(pdfCanvas{doc.AddPage(pdf.LabelWidth, pdf.LabelHeight)}); err != nil {
		return err
	}
	if d.Declaration != nil {
		return d.Declaration.AddDeclarationPages(doc)
	}
	return nil
}

// pdfCanvas draws the layout on a PDF page: dots become points, and y is flipped to PDF's
// bottom-left origin.
type pdfCanvas struct{ p *pdf.Page }

// pt converts label dots to points.
func pt(dots int) float64 { return float64(dots) * 72 / labelDPI }

func (c pdfCanvas) y(dots int) float64 { return pdf.LabelHeight - pt(dots) }

func (c pdfCanvas) text(x, y, w, size int, bold bool, a align, white bool, s string) {
	font := pdf.Helvetica
	if bold {
		font = pdf.HelveticaBold
	}
	width := pt(w)
	sizePt, s := fitText(font, pt(size), width, s)
	tx := pt(x)
	switch a {
	case alignCenter:
		tx += (width - pdf.TextWidth(font, sizePt, s)) / 2
	case alignRight:
		tx += width - pdf.TextWidth(font, sizePt, s)
	}
	if white {
		c.p.FillGray(1)
		defer c.p.FillGray(0)
	}
	c.p.Text(tx, c.y(y), sizePt, font, s)
}

func (c pdfCanvas) fill(x, y, w, h int, white bool) {
	if white {
		c.p.FillGray(1)
		defer c.p.FillGray(0)
	}
	c.p.Rect(pt(x), c.y(y+h), pt(w), pt(h))
}

func (c pdfCanvas) box(x, y, w, h, thick int) {
	c.fill(x, y, w, thick, false)
	c.fill(x, y+h-thick, w, thick, false)
	c.fill(x, y, thick, h, false)
	c.fill(x+w-thick, y, thick, h, false)
}

func (c pdfCanvas) line(x1, y1, x2, y2, thick int) {
	c.p.Line(pt(x1), c.y(y1), pt(x2), c.y(y2), pt(thick))
}

func (c pdfCanvas) barcode(x, y, module, height int, modules []int, _ string) {
	for i, m := range modules {
		if i%2 == 0 {
			c.fill(x, y, m*module, height, false)
		}
		x += m * module
	}
}

// fitText shrinks size until s fits in width, down to half its size (and not below 5); text
// still too wide is cut, so it never runs over the frame or the next box.
func fitText(font pdf.Font, size, width float64, s string) (float64, string) {
	floor := max(5, size/2)
	for size > floor && pdf.TextWidth(font, size, s) > width {
		size = max(floor, size-0.5)
	}
	for s != "" && pdf.TextWidth(font, size, s) > width {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return size, s
}

// LabelsPDF draws labels as one PDF, one 4 × 6 in page each in order, each international
// label followed by its customs declaration's pages (a batch's labels).
func LabelsPDF(labels []Document) ([]byte, error) {
	var doc pdf.Document
	for _, d := range labels {
		if err := d.addPages(&doc); err != nil {
			return nil, err
		}
	}
	return doc.Bytes(), nil
}
