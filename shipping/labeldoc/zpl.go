package labeldoc

import (
	"fmt"
	"strings"

	"github.com/waybill/waybill/shipping/barcode"
	"github.com/waybill/waybill/shipping/pdf"
)

// ZPL writes the label as a ZPL II program for a 203 dpi thermal printer: text fields, boxes
// and a Code 128 barcode (^BC) of the tracking code, the printer drawing what the layout says.
// An international label's customs declaration follows as label programs of its own, one per
// page, which the printer prints after it.
func (d Document) ZPL() ([]byte, error) {
	c := &zplCanvas{}
	c.b.WriteString("^XA\n^CI28\n")
	fmt.Fprintf(&c.b, "^PW%d\n^LL%d\n^LH0,0\n", labelWidth, labelHeight)
	if err := d.draw(c); err != nil {
		return nil, err
	}
	c.b.WriteString("^XZ\n")
	if d.Declaration == nil {
		return []byte(c.b.String()), nil
	}
	decl, err := d.Declaration.DeclarationZPL()
	if err != nil {
		return nil, err
	}
	return append([]byte(c.b.String()), decl...), nil
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
	just := map[align]string{alignLeft: "L", alignCenter: "C", alignRight: "R"}[a]
	// Font 0's capitals stand about three quarters of its height above the baseline.
	fmt.Fprintf(&c.b, "^FO%d,%d^FB%d,1,0,%s^A0N,%d,%d%s^FD%s^FS\n", x, y-h*3/4, w, just, h, h, reverse, zplText(s))
}

func (c *zplCanvas) fill(x, y, w, h int, white bool) {
	color := "B"
	if white {
		color = "W"
	}
	fmt.Fprintf(&c.b, "^FO%d,%d^GB%d,%d,%d,%s^FS\n", x, y, w, h, min(w, h), color)
}

func (c *zplCanvas) box(x, y, w, h, thick int) {
	fmt.Fprintf(&c.b, "^FO%d,%d^GB%d,%d,%d^FS\n", x, y, w, h, thick)
}

func (c *zplCanvas) line(x1, y1, x2, y2, thick int) {
	// ^GD draws a diagonal in its box: R leans right (/), L leans left (\).
	lean := "L"
	if (x2 > x1) != (y2 > y1) {
		lean = "R"
	}
	fmt.Fprintf(&c.b, "^FO%d,%d^GD%d,%d,%d,B,%s^FS\n", min(x1, x2), min(y1, y2), abs(x2-x1), abs(y2-y1), thick, lean)
}

func (c *zplCanvas) barcode(x, y, module, height int, _ []int, code string) {
	// ^BY sets the module width in dots; the printer encodes the code itself: a plain code in
	// automatic mode (A); a GS1-128 one, whose elements are digits of even length
	// (LabelBarcode), in no selected mode (N) as ZPL II writes GS1-128: >; starts code set C
	// and >8 is FNC1.
	mode, data := "A", zplText(code)
	if strings.Contains(code, barcode.FNC1) {
		mode, data = "N", ">;"+strings.ReplaceAll(code, barcode.FNC1, ">8")
	}
	fmt.Fprintf(&c.b, "^BY%d,3,%d\n^FO%d,%d^BCN,%d,N,N,N,%s^FD%s^FS\n", module, height, x, y, height, mode, data)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
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

// LabelsZPL writes labels as one ZPL II stream: each label's program (^XA … ^XZ) in order, an
// international label's followed by its customs declaration's, as a printer prints them one
// after another.
func LabelsZPL(labels []Document) ([]byte, error) {
	var b []byte
	for _, d := range labels {
		z, err := d.ZPL()
		if err != nil {
			return nil, err
		}
		b = append(b, z...)
	}
	return b, nil
}
