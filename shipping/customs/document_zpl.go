package customs

import (
	"fmt"
	"strings"

	"github.com/waybill/waybill/shipping/pdf"
)

// DeclarationZPL writes the CN22 or CN23 as ZPL II for a 203 dpi thermal printer, one label
// program (^XA … ^XZ) per page, to print after the shipping label.
func (d Document) DeclarationZPL() ([]byte, error) {
	var pages []*zplCanvas
	err := d.drawDeclaration(func() canvas {
		c := &zplCanvas{}
		c.b.WriteString("^XA\n^CI28\n")
		fmt.Fprintf(&c.b, "^PW%d\n^LL%d\n^LH0,0\n", pageWidth, pageHeight)
		pages = append(pages, c)
		return c
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, c := range pages {
		b.WriteString(c.b.String())
		b.WriteString("^XZ\n")
	}
	return []byte(b.String()), nil
}

// zplCanvas writes the layout as ZPL commands in dots. Text is font 0 (^A0), placed by its
// top-left corner; its width is estimated with Helvetica's metrics, which are wider than font
// 0's, so text shrunk to fit does fit.
type zplCanvas struct{ b strings.Builder }

func (c *zplCanvas) text(x, y, w, size int, bold bool, a align, white bool, s string) {
	font := pdf.Helvetica
	if bold {
		font = pdf.HelveticaBold
	}
	fitted, s := fitText(font, float64(size), float64(w), s)
	h := int(fitted)
	reverse := ""
	if white {
		reverse = "^FR"
	}
	just := [...]string{alignLeft: "L", alignCenter: "C", alignRight: "R"}[a]
	// Font 0's capitals stand about three quarters of its height above the baseline.
	fmt.Fprintf(&c.b, "^FO%d,%d^FB%d,1,0,%s^A0N,%d,%d%s^FD%s^FS\n", x, y-h*3/4, w, just, h, h, reverse, zplText(s))
}

func (c *zplCanvas) fill(x, y, w, h int) {
	fmt.Fprintf(&c.b, "^FO%d,%d^GB%d,%d,%d,B^FS\n", x, y, w, h, min(w, h))
}

func (c *zplCanvas) box(x, y, w, h, thick int) {
	fmt.Fprintf(&c.b, "^FO%d,%d^GB%d,%d,%d^FS\n", x, y, w, h, thick)
}

func (c *zplCanvas) barcode(x, y, module, height int, _ []int, code string) {
	// ^BY sets the module width in dots; the printer encodes the code itself.
	fmt.Fprintf(&c.b, "^BY%d,3,%d\n^FO%d,%d^BCN,%d,N,N,N,A^FD%s^FS\n", module, height, x, y, height, zplText(code))
}

// zplText makes s safe as ZPL field data: the command prefixes ^ and ~ and control
// characters would end or corrupt the field.
func zplText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '^' || r == '~':
			return '-'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
}
