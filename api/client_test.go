package api

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// testKey looks like a real key so that scrubbing is exercised.
const testKey = "pub_3f6c1a2e-9b7d-4c5e-8a1f-0d2b4e6f8a9c"

func TestNew(t *testing.T) {
	tests := []struct {
		name, base string
		key        Secret
		opts       []Option
		wantErr    string
		wantBase   string
	}{
		{name: "plain", base: "https://api.example.com", key: testKey, wantBase: "https://api.example.com"},
		{name: "trailing slash and prefix", base: "http://h:8080/av/", key: testKey, wantBase: "http://h:8080/av"},
		{name: "no scheme", base: "api.example.com", key: testKey, wantErr: "want http:// or https://"},
		{name: "ftp", base: "ftp://api.example.com", key: testKey, wantErr: "want http:// or https://"},
		{name: "query", base: "https://h/?token=x", key: testKey, wantErr: "query"},
		{name: "bad URL", base: "https://h/%zz", key: testKey, wantErr: "does not parse"},
		{name: "no key", base: "https://h", key: "  ", wantErr: "no API key"},
		{name: "bad method", base: "https://h", key: testKey, opts: []Option{WithMethod("PUT")}, wantErr: "want GET or POST"},
		{name: "user info redacted", base: "ftp://user:pw@h", key: testKey, wantErr: "want http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.base, tt.key, tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New() error = %v, want it to mention %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Errorf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.base != tt.wantBase {
				t.Errorf("base = %q, want %q", c.base, tt.wantBase)
			}
		})
	}
}

// TestTokenSourceFormat prints a token source holding a token: fmt does
// not call Secret's methods on unexported fields, so its own Format must
// keep the token out.
func TestTokenSourceFormat(t *testing.T) {
	ts := &tokenSource{token: "tok_5e1d9c7b2a4f8e6d_001", gen: 1}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(verb, ts); strings.Contains(out, "tok_5e1d9c7b2a4f8e6d_001") {
			t.Errorf("%s of a token source shows the token: %s", verb, out)
		}
	}
}

// FuzzQueryEscape holds the encoded address to url.Values' encoding of the
// same parameters.
func FuzzQueryEscape(f *testing.F) {
	for _, s := range []string{"", "12 Main St", "Dún Laoghaire & Co. #5/6?x=y+z%20~._-", "\x00\xff", "a=b&c"} {
		f.Add(s, "IE")
	}
	f.Fuzz(func(t *testing.T, v, country string) {
		a := Address{Lines: []string{v, "x " + v}, City: v, Country: country, Language: v}
		got, err := encodeAddress(a)
		if err != nil {
			return
		}
		var want strings.Builder
		add := func(name, value string) {
			if want.Len() > 0 {
				want.WriteByte('&')
			}
			want.WriteString(url.QueryEscape(name) + "=" + url.QueryEscape(value))
		}
		for _, l := range a.Lines {
			if strings.TrimSpace(l) != "" {
				add("addressLine", l)
			}
		}
		for _, p := range [][2]string{{"city", a.City}, {"region", a.Region}, {"country", a.Country}, {"language", a.Language}} {
			if p[0] == "country" || strings.TrimSpace(p[1]) != "" {
				add(p[0], p[1])
			}
		}
		if got != want.String() {
			t.Fatalf("encodeAddress(%+v) = %q, want %q", a, got, want.String())
		}
	})
}
