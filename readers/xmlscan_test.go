package readers

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/text/encoding/charmap"
)

// errOpenAtEOF stands for input that ends with elements open.
var errOpenAtEOF = errors.New("elements open at the end")

// scanEvents runs an xmlScanner over in and returns its elements as
// "<name" and "</name" (a self-closing element gives both).
func scanEvents(r io.Reader, limit int64) ([]string, error) {
	s := newXMLScanner(r, limit)
	var ev []string
	for {
		tok, err := s.next()
		if errors.Is(err, io.EOF) {
			if len(s.ends) > 0 {
				return ev, errOpenAtEOF
			}
			return ev, nil
		}
		if err != nil {
			return ev, err
		}
		switch tok {
		case tokStart:
			ev = append(ev, "<"+string(s.local))
			if s.selfClosing {
				ev = append(ev, "</"+string(s.local))
			}
		case tokEnd:
			ev = append(ev, "</"+string(s.local))
		}
	}
}

// stdEvents does the same with encoding/xml, set up as excelize sets it up
// (strict, declared encodings translated; here every one as Latin-1).
func stdEvents(in []byte) ([]string, error) {
	d := xml.NewDecoder(bytes.NewReader(in))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) {
		return charmap.ISO8859_1.NewDecoder().Reader(r), nil
	}
	var ev []string
	for {
		t, err := d.Token()
		if errors.Is(err, io.EOF) {
			return ev, nil
		}
		if err != nil {
			return ev, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			ev = append(ev, "<"+t.Name.Local)
		case xml.EndElement:
			ev = append(ev, "</"+t.Name.Local)
		}
	}
}

func TestXMLScannerStrict(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string // "" for none
	}{
		{"sheet", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
			`<x:worksheet xmlns:x="s"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c>` +
			`<c r="B1" t="inlineStr"><is><t xml:space="preserve"> a &amp; b &#233; &#x1F600; </t></is></c></row>` +
			`<row r='2'/></sheetData><!-- a comment --><![CDATA[x<y]]></x:worksheet>`, ""},
		{"gt in an attribute value", `<a b=">"/>`, ""},
		{"doctype with an internal subset", `<!DOCTYPE a [<!ENTITY e "x>"> <!-- > -->]><a/>`, ""},
		{"latin-1 declared", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xe9</a>", ""},
		{"control character", "<a>x\x0By</a>", "illegal character code U+000B"},
		{"invalid utf-8", "<a>caf\xe9</a>", "invalid UTF-8"},
		{"noncharacter", "<a>\uFFFE</a>", "illegal character code U+FFFE"},
		{"unknown entity", "<a>&nbsp;</a>", "invalid character entity &nbsp;"},
		{"unescaped ampersand", "<a>Smith & Sons</a>", "invalid character entity"},
		{"reference past unicode", "<a>&#x110000;</a>", "invalid character entity"},
		{"empty reference", "<a>&#;</a>", "invalid character entity"},
		{"reference to nul", "<a>&#0;</a>", "illegal character code U+0000"},
		{"reference to a surrogate", "<a>&#xD800;</a>", ""},
		{"cdata end in text", "<a>]]></a>", "unescaped ]]>"},
		{"lt in an attribute value", `<a b="<"/>`, "unescaped < inside quoted string"},
		{"unquoted attribute", `<a b=1/>`, "unquoted or missing attribute value"},
		{"attribute without value", `<a b/>`, "attribute name without ="},
		{"bad element name", `<1a/>`, "invalid XML name"},
		{"two colons", `<a:b:c/>`, "invalid XML name"},
		{"mismatched end", `<a><b></a></b>`, "element <b> closed by </a>"},
		{"end without start", `</a>`, "unexpected end element"},
		{"junk in an end tag", `<a></a b>`, "invalid characters between </a and >"},
		{"dashes in a comment", `<a><!-- a -- b --></a>`, `"--" not allowed in comments`},
		{"bad cdata opening", `<a><![CDAT[x]]></a>`, "invalid sequence after <!"},
		{"xml 1.1", `<?xml version="1.1"?><a/>`, "unsupported version"},
		{"cut in a tag", `<a><b c="`, "the XML ends inside a tag"},
		{"open at the end", `<a><b>`, "elements open at the end"},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			_, err := scanEvents(r, 1<<20)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("%s (one byte reads %v): error = %v, want %q", tt.name, oneByte, err, tt.wantErr)
			}
			if _, stdErr := stdEvents([]byte(tt.in)); (stdErr == nil) != (err == nil) {
				t.Errorf("%s: encoding/xml says %v, the scanner %v", tt.name, stdErr, err)
			}
		}
	}
}

// TestXMLScannerBoundaries feeds text whose entities, characters and
// "]]>" straddle the scanner's buffer.
func TestXMLScannerBoundaries(t *testing.T) {
	for _, tail := range []string{"&amp;", "&#x1F600;", "é", "\U0001F600", "]]>", "&nbsp;", "\xe9", "]]", "&#65;"} {
		// The first read fills the buffer: "<a>" and pad bytes put the
		// tail across its end.
		for pad := scanBufSize - 3 - len(tail); pad <= scanBufSize-3+1; pad++ {
			in := "<a>" + strings.Repeat("x", pad) + tail + "</a>"
			got, err := scanEvents(strings.NewReader(in), 1<<20)
			want, stdErr := stdEvents([]byte(in))
			if (err == nil) != (stdErr == nil) || strings.Join(got, "") != strings.Join(want, "") {
				t.Fatalf("tail %q after %d bytes: scanner %q, %v; encoding/xml %q, %v", tail, pad, got, err, want, stdErr)
			}
		}
	}
}

func TestXMLScannerLimit(t *testing.T) {
	tests := []struct{ name, in string }{
		{"text", "<a>" + strings.Repeat(" ", 2000) + "</a>"},
		{"tag", "<a " + strings.Repeat(`b="1" `, 400) + "/>"},
		{"comment", "<!--" + strings.Repeat("x", 2000) + "-->"},
		{"cdata", "<a><![CDATA[" + strings.Repeat("x", 2000) + "]]></a>"},
		{"directive", "<!DOCTYPE " + strings.Repeat("x", 2000) + ">"},
		{"instruction", "<?pi " + strings.Repeat("x", 2000) + "?>"},
	}
	for _, tt := range tests {
		if _, err := scanEvents(strings.NewReader(tt.in), 1000); !errors.Is(err, errTokenTooLong) {
			t.Errorf("%s: error = %v, want errTokenTooLong", tt.name, err)
		}
	}
}

// FuzzXMLScanner checks the scanner against encoding/xml: the same
// elements, and an error exactly when encoding/xml has one, so that what
// the check passes excelize reads to the end. Inputs outside what the
// scanner mirrors (names beyond ASCII, references longer than maxEntity,
// directives) are skipped.
func FuzzXMLScanner(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0"?><a b="1"><c/>t&amp;<![CDATA[<x>]]><!-- c --></a>`,
		`<sst count="2"><si><t>a</t></si><si><r><t>b</t></r></si></sst>`,
		"<a>\x00</a>", "<a>&#0;</a>", `<a b='"'/>`, "<a:b xmlns:a='x'></a:b>", "<a></b>",
		`<?xml version="1.0" encoding="latin1"?><a>` + "\xe9</a>", "<a>]]</a>", "<:a/>", "<a:/>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := scanEvents(bytes.NewReader(in), 1<<20)
		gotOne, errOne := scanEvents(iotest.OneByteReader(bytes.NewReader(in)), 1<<20)
		if (err == nil) != (errOne == nil) || strings.Join(got, "|") != strings.Join(gotOne, "|") {
			t.Fatalf("reads of one byte differ: %q, %v; %q, %v", gotOne, errOne, got, err)
		}
		if bytes.Contains(in, []byte("<!")) && !bytes.Contains(in, []byte("<!--")) && !bytes.Contains(in, []byte("<![CDATA[")) ||
			bytes.Contains(in, []byte("<!D")) || bytes.Contains(in, []byte("<!E")) || bytes.Contains(in, []byte("<!A")) {
			return
		}
		want, stdErr := stdEvents(in)
		if stdErr != nil && err == nil {
			msg := stdErr.Error()
			if strings.Contains(msg, "invalid XML name") && hasNonASCII(in) ||
				strings.Contains(msg, "invalid character entity") && longReference(in) {
				return
			}
			t.Fatalf("encoding/xml fails (%v), the scanner does not; elements %q", stdErr, got)
		}
		if stdErr == nil && err != nil {
			if errors.Is(err, errOpenAtEOF) {
				return // encoding/xml leaves that to its caller
			}
			t.Fatalf("the scanner fails (%v), encoding/xml does not; elements %q", err, want)
		}
		if stdErr == nil && strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("elements differ:\nscanner      %q\nencoding/xml %q", got, want)
		}
	})
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

func longReference(b []byte) bool {
	for i := bytes.IndexByte(b, '&'); i >= 0; {
		semi := bytes.IndexByte(b[i:], ';')
		if semi < 0 || semi > maxEntity {
			return true
		}
		next := bytes.IndexByte(b[i+1:], '&')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}
