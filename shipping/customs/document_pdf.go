package customs

import (
	"unicode/utf8"

	"github.com/waybill/waybill/shipping/pdf"
)

// DeclarationPDF draws the CN22 (one 4 × 6 in page) or the CN23 (as many 4 × 6 in pages as its
// items need) as a PDF of its own.
func (d Document) DeclarationPDF() ([]byte, error) {
	var doc pdf.Document
	if err := d.AddDeclarationPages(&doc); err != nil {
		return nil, err
	}
	return doc.Bytes(), nil
}

// AddDeclarationPages appends the CN22 or CN23 pages to doc: after the label's page, an
// international label's document.
func (d Document) AddDeclarationPages(doc *pdf.Document) error {
	return d.drawDeclaration(func() canvas { return pdfCanvas{doc.AddPage(pdf.LabelWidth, pdf.LabelHeight)} })
}

// pdfCanvas draws the layout on a PDF page: dots become points, and y is flipped to PDF's
// bottom-left origin.
type pdfCanvas struct{ p *pdf.Page }

// pt converts dots to points.
func pt(dots int) float64 { return float64(dots) * 72 / dpi }

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

func (c pdfCanvas) fill(x, y, w, h int) { c.p.Rect(pt(x), c.y(y+h), pt(w), pt(h)) }

func (c pdfCanvas) box(x, y, w, h, thick int) {
	c.fill(x, y, w, thick)
	c.fill(x, y+h-thick, w, thick)
	c.fill(x, y, thick, h)
	c.fill(x+w-thick, y, thick, h)
}

func (c pdfCanvas) barcode(x, y, module, height int, modules []int, _ string) {
	for i, m := range modules {
		if i%2 == 0 {
			c.fill(x, y, m*module, height)
		}
		x += m * module
	}
}

// fitText shrinks size until s fits in width, down to half its size (and not below 4); text
// still too wide is cut, so it never runs over the frame or the next column.
func fitText(font pdf.Font, size, width float64, s string) (float64, string) {
	floor := max(4, size/2)
	for size > floor && pdf.TextWidth(font, size, s) > width {
		size = max(floor, size-0.5)
	}
	for s != "" && pdf.TextWidth(font, size, s) > width {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return size, s
}
