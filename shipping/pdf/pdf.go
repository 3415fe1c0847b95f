// Package pdf writes small PDF 1.4 documents with the standard library alone: pages of any
// size holding text in the standard Helvetica fonts, filled rectangles and lines. It is what the
// label and invoice documents are drawn with.
//
// Coordinates are PDF points (1/72 in) measured from the bottom-left corner of the page, as in
// PDF itself; a text's y is its baseline. The output is deterministic: the same calls give the
// same bytes (no timestamps, no random identifiers), so documents can be regenerated on demand
// instead of stored.
package pdf

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Font is one of the standard Type 1 fonts every PDF reader has; no font data is embedded.
type Font int

const (
	Helvetica Font = iota
	HelveticaBold
)

// Standard page sizes in points.
const (
	LetterWidth, LetterHeight = 612, 792 // US Letter, 8.5 × 11 in
	LabelWidth, LabelHeight   = 288, 432 // 4 × 6 in shipping label
)

func (f Font) resource() string {
	if f == HelveticaBold {
		return "/F2"
	}
	return "/F1"
}

// Document is a PDF being built. The zero value is an empty document.
type Document struct {
	pages []*Page
}

// Page is one page of a Document; draw on it with its methods.
type Page struct {
	width, height float64
	content       bytes.Buffer
	gray          float64 // the current fill gray level, 0 black … 1 white
}

// AddPage appends a page of the given size in points and returns it.
func (d *Document) AddPage(widthPt, heightPt float64) *Page {
	p := &Page{width: widthPt, height: heightPt}
	d.pages = append(d.pages, p)
	return p
}

// Pages reports how many pages the document has.
func (d *Document) Pages() int { return len(d.pages) }

// Size returns the page's width and height in points.
func (p *Page) Size() (width, height float64) { return p.width, p.height }

// Text draws s with its baseline starting at (x, y). Characters outside the fonts' WinAnsi
// encoding (Latin-1 and a few typographic marks) are replaced by '?', control characters by a
// space.
func (p *Page) Text(x, y, sizePt float64, font Font, s string) {
	fmt.Fprintf(&p.content, "BT %s %s Tf %s %s Td (%s) Tj ET\n", font.resource(), num(sizePt), num(x), num(y), escape(encode(s)))
}

// TextRight draws s so that it ends at x.
func (p *Page) TextRight(x, y, sizePt float64, font Font, s string) {
	p.Text(x-TextWidth(font, sizePt, s), y, sizePt, font, s)
}

// Rect fills the rectangle with its lower-left corner at (x, y) in the current fill gray.
func (p *Page) Rect(x, y, w, h float64) {
	fmt.Fprintf(&p.content, "%s %s %s %s re f\n", num(x), num(y), num(w), num(h))
}

// Line strokes a black line from (x1, y1) to (x2, y2), widthPt wide.
func (p *Page) Line(x1, y1, x2, y2, widthPt float64) {
	fmt.Fprintf(&p.content, "%s w 0 G %s %s m %s %s l S\n", num(widthPt), num(x1), num(y1), num(x2), num(y2))
}

// FillGray sets the gray level, from 0 (black, the default) to 1 (white), that Rect and Text
// fill with from now on.
func (p *Page) FillGray(level float64) {
	level = max(0, min(1, level))
	if level != p.gray {
		p.gray = level
		fmt.Fprintf(&p.content, "%s g\n", num(level))
	}
}

// Bytes renders the document. A document without pages gets one blank US Letter page, since
// a PDF needs at least one.
func (d *Document) Bytes() []byte {
	pages := d.pages
	if len(pages) == 0 {
		pages = []*Page{{width: LetterWidth, height: LetterHeight}}
	}
	var b bytes.Buffer
	// The second line's high bytes tell transfer tools the file is binary.
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	// Objects: 1 catalog, 2 page tree, 3 and 4 fonts, then a page and its content per page.
	n := 4 + 2*len(pages)
	offsets := make([]int, n+1)
	obj := func(id int, body string) {
		offsets[id] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", id, body)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = strconv.Itoa(5+2*i) + " 0 R"
	}
	obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj(4, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	for i, p := range pages {
		page, content := 5+2*i, 6+2*i
		obj(page, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>",
			num(p.width), num(p.height), content))
		offsets[content] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n<< /Length %d >>\nstream\n", content, p.content.Len())
		b.Write(p.content.Bytes())
		b.WriteString("endstream\nendobj\n")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", n+1)
	for id := 1; id <= n; id++ {
		fmt.Fprintf(&b, "%010d 00000 n \n", offsets[id])
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", n+1, xref)
	return b.Bytes()
}

// num formats a coordinate with at most two decimals and no exponent.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// winAnsiExtra maps the characters WinAnsiEncoding places in 0x80–0x9F.
var winAnsiExtra = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87, 'ˆ': 0x88,
	'‰': 0x89, 'Š': 0x8a, '‹': 0x8b, 'Œ': 0x8c, 'Ž': 0x8e, '‘': 0x91, '’': 0x92, '“': 0x93,
	'”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97, '˜': 0x98, '™': 0x99, 'š': 0x9a, '›': 0x9b,
	'œ': 0x9c, 'ž': 0x9e, 'Ÿ': 0x9f,
}

// encode converts s to WinAnsi bytes.
func encode(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			out = append(out, ' ')
		case r < 0x80 || (r >= 0xa0 && r <= 0xff):
			out = append(out, byte(r))
		default:
			if c, ok := winAnsiExtra[r]; ok {
				out = append(out, c)
			} else {
				out = append(out, '?')
			}
		}
	}
	return out
}

// escape writes WinAnsi bytes as the inside of a PDF literal string: \, ( and ) escaped and
// bytes above ASCII as octal escapes, so content streams stay 7-bit.
func escape(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == '\\' || c == '(' || c == ')':
			s.WriteByte('\\')
			s.WriteByte(c)
		case c >= 0x80:
			fmt.Fprintf(&s, "\\%03o", c)
		default:
			s.WriteByte(c)
		}
	}
	return s.String()
}

// TextWidth returns how wide s is when drawn in font at sizePt, from the fonts' standard
// metrics. Accented letters measure as their base letter.
func TextWidth(font Font, sizePt float64, s string) float64 {
	widths := &helveticaWidths
	if font == HelveticaBold {
		widths = &helveticaBoldWidths
	}
	total := 0
	for _, c := range encode(s) {
		if c >= 0x80 {
			c = latinBase(c)
		}
		if c >= 0x20 && c < 0x7f {
			total += int(widths[c-0x20])
		} else {
			total += 556
		}
	}
	return float64(total) * sizePt / 1000
}

// latinBase maps a WinAnsi byte above 0x7f to an ASCII letter of about its width.
func latinBase(c byte) byte {
	switch {
	case c >= 0xc0 && c <= 0xc5, c >= 0xe0 && c <= 0xe5:
		return 'A' + (c & 0x20) // À–Å, à–å
	case c == 0xc7, c == 0xe7:
		return 'C' + (c & 0x20)
	case c >= 0xc8 && c <= 0xcb, c >= 0xe8 && c <= 0xeb:
		return 'E' + (c & 0x20)
	case c >= 0xcc && c <= 0xcf, c >= 0xec && c <= 0xef:
		return 'I' + (c & 0x20)
	case c == 0xd1, c == 0xf1:
		return 'N' + (c & 0x20)
	case c >= 0xd2 && c <= 0xd6, c == 0xd8, c >= 0xf2 && c <= 0xf6, c == 0xf8:
		return 'O' + (c & 0x20)
	case c >= 0xd9 && c <= 0xdc, c >= 0xf9 && c <= 0xfc:
		return 'U' + (c & 0x20)
	case c == 0xdd, c == 0xfd, c == 0xff, c == 0x9f:
		return 'Y' + (c & 0x20)
	case c == 0xc6, c == 0x8c:
		return 'W' // Æ, Œ are about as wide as W
	case c == 0xe6, c == 0x9c:
		return 'm'
	case c == 0x8a, c == 0x9a:
		return 'S' + (c & 0x10 << 1) // Š, š
	case c == 0x8e, c == 0x9e:
		return 'Z' + (c & 0x10 << 1) // Ž, ž
	case c == 0x95, c == 0xb7:
		return '.'
	case c == 0x96:
		return '0' // en dash: 556
	case c == 0x97, c == 0x89:
		return 'M' // em dash, per mille: about 1000
	case c == 0x91, c == 0x92, c == 0x82:
		return ','
	case c == 0xa0:
		return ' '
	}
	return '0' // most other Latin-1 signs are 556 units wide, like the digits
}

// helveticaWidths are the Helvetica advance widths (1/1000 em) of WinAnsi 0x20–0x7e.
var helveticaWidths = [95]uint16{
	278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // space … /
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0 … ?
	1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @ … O
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P … _
	333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // ` … o
	556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p … ~
}

// helveticaBoldWidths are the Helvetica-Bold advance widths of WinAnsi 0x20–0x7e.
var helveticaBoldWidths = [95]uint16{
	278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
	975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
	333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
	611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
}

// WrapText splits s into lines no wider than width when drawn in font at sizePt, breaking at
// spaces (a single word wider than width gets a line of its own).
func WrapText(font Font, sizePt, width float64, s string) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && TextWidth(font, sizePt, try) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Fit shortens s with an ellipsis so that it is at most width wide in font at size, in one
// pass over s.
func Fit(font Font, size, width float64, s string) string {
	if TextWidth(font, size, s) <= width {
		return s
	}
	room := width - TextWidth(font, size, "...")
	used := 0.0
	for i, c := range s {
		used += TextWidth(font, size, string(c))
		if used > room {
			return s[:i] + "..."
		}
	}
	return s
}
