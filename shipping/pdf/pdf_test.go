package pdf

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/waybill/waybill/shipping/tooltest"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

func sample() *Document {
	var d Document
	p := d.AddPage(LetterWidth, LetterHeight)
	p.Text(72, 720, 18, HelveticaBold, "Invoice INV-2026-000042")
	p.Text(72, 700, 10, Helvetica, `Paren (test) and back\slash, Zoë, 50 €, 日本`)
	p.FillGray(0.85)
	p.Rect(72, 600, 468, 40)
	p.FillGray(0)
	p.Line(72, 590, 540, 590, 1)
	q := d.AddPage(LabelWidth, LabelHeight)
	q.Rect(20, 20, 100, 100)
	q.TextRight(268, 400, 12, Helvetica, "right")
	return &d
}

func TestBytesStructure(t *testing.T) {
	b := sample().Bytes()
	if !bytes.HasPrefix(b, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(b, []byte("%%EOF\n")) {
		t.Fatalf("not framed as a PDF 1.4 file: %q … %q", b[:12], b[len(b)-8:])
	}
	// startxref must point at the xref table, and each entry at its object.
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(b[xref:], []byte("xref\n0 9\n")) {
		t.Fatalf("startxref %d points at %q; want the xref table of 9 entries", xref, b[xref:xref+10])
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllSubmatch(b[xref:], -1)
	if len(entries) != 8 {
		t.Fatalf("xref has %d in-use entries; want 8", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		want := fmt.Sprintf("%d 0 obj\n", i+1)
		if !bytes.HasPrefix(b[off:], []byte(want)) {
			t.Errorf("xref entry %d = offset %d holding %q; want %q", i+1, off, b[off:off+8], want)
		}
	}
	// Each stream's /Length must be exact.
	for _, s := range regexp.MustCompile(`(?s)<< /Length (\d+) >>\nstream\n(.*?)endstream`).FindAllSubmatch(b, -1) {
		if n, _ := strconv.Atoi(string(s[1])); n != len(s[2]) {
			t.Errorf("stream /Length %d; its data is %d bytes", n, len(s[2]))
		}
	}
	if !bytes.Equal(b, sample().Bytes()) {
		t.Error("two renderings of the same document differ")
	}
	if !bytes.Contains(b, []byte(`(Paren \(test\) and back\\slash, Zo\353, 50 \200, ??) Tj`)) {
		t.Errorf("text not escaped and encoded as WinAnsi:\n%s", b)
	}
}

func TestEmptyDocument(t *testing.T) {
	var d Document
	if b := d.Bytes(); !bytes.Contains(b, []byte("/Count 1")) {
		t.Errorf("empty document = %q; want one blank page", b)
	}
}

func TestEncode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ABC xyz", "ABC xyz"},
		{"tab\there", "tab here"},
		{"café", "caf\xe9"},
		{"“quoted” – dash", "\x93quoted\x94 \x96 dash"},
		{"Łódź", "?\xf3d?"},
		{"emoji 📦", "emoji ?"},
	}
	for _, tt := range tests {
		if got := string(encode(tt.in)); got != tt.want {
			t.Errorf("encode(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestTextWidth(t *testing.T) {
	tests := []struct {
		font Font
		size float64
		s    string
		want float64
	}{
		{Helvetica, 10, "Hello", 22.78},     // 722+556+222+222+556
		{HelveticaBold, 10, "Hello", 24.45}, // 722+556+278+278+611
		{Helvetica, 1000, "0", 556},
		{Helvetica, 10, "é", 5.56}, // measured as e
		{Helvetica, 10, "", 0},
	}
	for _, tt := range tests {
		if got := TextWidth(tt.font, tt.size, tt.s); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("TextWidth(%v, %v, %q) = %v; want %v", tt.font, tt.size, tt.s, got, tt.want)
		}
	}
}

func TestWrapText(t *testing.T) {
	lines := WrapText(Helvetica, 10, 60, "one two three four five six seven")
	for _, l := range lines {
		if w := TextWidth(Helvetica, 10, l); w > 60 {
			t.Errorf("line %q is %v wide; want ≤ 60", l, w)
		}
	}
	if len(lines) < 3 {
		t.Errorf("WrapText = %q; want at least 3 lines", lines)
	}
}

func TestNum(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{0, "0"}, {1, "1"}, {1.5, "1.5"}, {1.256, "1.26"}, {-0.001, "0"}, {612, "612"}, {1e9, "1000000000"}}
	for _, tt := range tests {
		if got := num(tt.in); got != tt.want {
			t.Errorf("num(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// RequireTool returns the path of an outside tool, skipping the test when it is missing —
// unless CI=true, where a missing tool fails it.
// TestRenderWithPoppler proves the output is a PDF a real reader opens: pdftoppm renders both
// pages at their sizes, and the pages are not blank.
func TestRenderWithPoppler(t *testing.T) {
	tool := tooltest.Require(t, "pdftoppm")
	dir := t.TempDir()
	file := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(file, sample().Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-r", "36", "-png", file, filepath.Join(dir, "page")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "page-*.png"))
	if len(pngs) != 2 {
		t.Fatalf("pdftoppm rendered %d pages; want 2", len(pngs))
	}
	sizes := [][2]int{{306, 396}, {144, 216}} // points at 36 dpi = half
	for i, name := range pngs {
		img := readPNG(t, name)
		if b := img.Bounds(); b.Dx() != sizes[i][0] || b.Dy() != sizes[i][1] {
			t.Errorf("page %d is %v; want %dx%d", i+1, b.Size(), sizes[i][0], sizes[i][1])
		}
		if dark := darkPixels(img); dark < 100 {
			t.Errorf("page %d has %d dark pixels; want a drawn page", i+1, dark)
		}
	}
}

func readPNG(t *testing.T, name string) image.Image {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func darkPixels(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0x8000 {
				n++
			}
		}
	}
	return n
}
